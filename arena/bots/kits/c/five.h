/*
 * five.h: Five Arena's C bot SDK, one header over msgpack-c (Debian's
 * libmsgpack-dev).  Write a choose function, fill a five_bot, call five_run():
 *
 *     #include "five.h"
 *     static int choose(const five_request *request, void *state) { return 0; }
 *     int main(void) {
 *         five_bot bot = {.name = "first-legal", .choose = choose};
 *         return five_run(&bot);
 *     }
 *
 *     cc -O2 -o bot bot.c -lmsgpackc
 *
 * five_run() owns stdin and stdout: it reads with read(2) into msgpack-c's
 * streaming unpacker (a message is handled as soon as its bytes arrive),
 * answers hello and every request at once (each reply written whole), calls
 * the optional hooks on match_start, game_start and game_end, and returns 0 at
 * match_end or at the end of input.  It points file descriptor 1 at stderr, so
 * a stray printf can never corrupt the protocol stream.
 * The protocol: docs/protocol.md; this SDK's surface: docs/bots.md#c.
 */
#ifndef FIVE_H
#define FIVE_H

#include <errno.h>
#include <msgpack.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIVE_PROTOCOL 1
/* The arena keeps 200 characters of a hello's name, version and author. */
#define FIVE_TEXT_MAX 200
#define FIVE_READ_SIZE 65536

/* One request to act: answer with an index into legal. */
typedef struct five_request {
    uint64_t id;
    /* What your seat may see now: a msgpack map (docs/rules/<game>.md); read
       its fields with five_get(), print it with msgpack_object_print(). */
    const msgpack_object *observation;
    /* The legal actions, NUL-terminated strings in the game's grammar; never empty. */
    const char *const *legal;
    size_t n_legal;
    /* What happened since your previous request: an array of maps (or nil). */
    const msgpack_object *events;
    /* move_ms is free for this move; bank_ms more may be borrowed. -1: not sent. */
    int64_t move_ms, bank_ms;
    /* "wall" or "cpu": what the arena charges. */
    char clock[8];
} five_request;

/* A message hook: the whole message (a map). */
typedef void (*five_hook)(const msgpack_object *message, void *state);

typedef struct five_bot {
    const char *name, *version, *author;  /* NULL: left out */
    /* The index into request->legal of the action to play. */
    int (*choose)(const five_request *request, void *state);
    five_hook on_match_start;  /* optional: game, options, players, games */
    five_hook on_game_start;   /* optional: seat, game_number, players */
    five_hook on_game_end;     /* optional: scores, places, game_places, reveal */
    void *state;               /* passed to choose and the hooks */
} five_bot;

/* The value of key in a map; NULL when absent or when map is not a map. */
static inline const msgpack_object *five_get(const msgpack_object *map, const char *key) {
    size_t length = strlen(key);
    if (map == NULL || map->type != MSGPACK_OBJECT_MAP) return NULL;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object_kv *pair = &map->via.map.ptr[i];
        if (pair->key.type == MSGPACK_OBJECT_STR && pair->key.via.str.size == length
            && memcmp(pair->key.via.str.ptr, key, length) == 0)
            return &pair->val;
    }
    return NULL;
}

/* 1 if object is the string text. */
static inline int five_is(const msgpack_object *object, const char *text) {
    size_t length = strlen(text);
    return object != NULL && object->type == MSGPACK_OBJECT_STR
           && object->via.str.size == length && memcmp(object->via.str.ptr, text, length) == 0;
}

/* 1 and *out set if object is an integer that fits an int64_t (any msgpack width). */
static inline int five_int(const msgpack_object *object, int64_t *out) {
    if (object == NULL) return 0;
    if (object->type == MSGPACK_OBJECT_POSITIVE_INTEGER && object->via.u64 <= INT64_MAX) {
        *out = (int64_t)object->via.u64;
        return 1;
    }
    if (object->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        *out = object->via.i64;
        return 1;
    }
    return 0;
}

/* Copy a string object into buffer, NUL-terminated and cut to size - 1 bytes;
   its full length, or -1 if object is not a string. */
static inline long five_text(const msgpack_object *object, char *buffer, size_t size) {
    if (object == NULL || object->type != MSGPACK_OBJECT_STR || size == 0) return -1;
    size_t n = object->via.str.size < size - 1 ? object->via.str.size : size - 1;
    memcpy(buffer, object->via.str.ptr, n);
    buffer[n] = '\0';
    return (long)object->via.str.size;
}

/* printf to stderr, with a newline (the arena keeps the last 4 KiB of each game). */
static inline void five_log(const char *format, ...) {
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
}

static inline int five__write(int fd, const char *data, size_t size) {
    while (size > 0) {  /* a pipe may take less at once */
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        data += n;
        size -= (size_t)n;
    }
    return 0;
}

static inline void five__pack_str(msgpack_packer *packer, const char *text, size_t max) {
    size_t n = strlen(text);
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80) n--;  /* whole UTF-8 characters */
    }
    msgpack_pack_str(packer, n);
    msgpack_pack_str_body(packer, text, n);
}

static inline int five__send_hello(const five_bot *bot, int out) {
    const char *keys[] = {"name", "version", "author"};
    const char *values[] = {bot->name, bot->version, bot->author};
    uint32_t fields = 2;
    msgpack_sbuffer buffer;
    msgpack_packer packer;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer_init(&packer, &buffer, msgpack_sbuffer_write);
    for (int i = 0; i < 3; i++) fields += values[i] != NULL;
    msgpack_pack_map(&packer, fields);
    five__pack_str(&packer, "type", 4);
    five__pack_str(&packer, "hello", 5);
    for (int i = 0; i < 3; i++) {
        if (values[i] == NULL) continue;
        five__pack_str(&packer, keys[i], 16);
        five__pack_str(&packer, values[i], FIVE_TEXT_MAX);
    }
    five__pack_str(&packer, "protocol", 8);
    msgpack_pack_int(&packer, FIVE_PROTOCOL);
    int status = five__write(out, buffer.data, buffer.size);
    msgpack_sbuffer_destroy(&buffer);
    return status;
}

static inline int five__send_action(uint64_t id, int index, int out) {
    msgpack_sbuffer buffer;
    msgpack_packer packer;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer_init(&packer, &buffer, msgpack_sbuffer_write);
    msgpack_pack_map(&packer, 3);
    five__pack_str(&packer, "type", 4);
    five__pack_str(&packer, "action", 6);
    five__pack_str(&packer, "id", 2);
    msgpack_pack_uint64(&packer, id);
    five__pack_str(&packer, "index", 5);
    msgpack_pack_int(&packer, index);
    int status = five__write(out, buffer.data, buffer.size);
    msgpack_sbuffer_destroy(&buffer);
    return status;
}

/* Answer a request; -1 if the reply cannot be written or memory runs out. */
static inline int five__answer(const five_bot *bot, const msgpack_object *message, int out) {
    static const msgpack_object nil = {.type = MSGPACK_OBJECT_NIL};
    const msgpack_object *id = five_get(message, "id");
    const msgpack_object *legal = five_get(message, "legal");
    const msgpack_object *time = five_get(message, "time");
    five_request request = {.move_ms = -1, .bank_ms = -1};
    if (id == NULL || id->type != MSGPACK_OBJECT_POSITIVE_INTEGER) return 0;  /* not a request */
    request.id = id->via.u64;
    request.observation = five_get(message, "observation");
    request.events = five_get(message, "events");
    if (request.observation == NULL) request.observation = &nil;
    if (request.events == NULL) request.events = &nil;
    five_int(five_get(time, "move_ms"), &request.move_ms);
    five_int(five_get(time, "bank_ms"), &request.bank_ms);
    five_text(five_get(time, "clock"), request.clock, sizeof request.clock);
    size_t n = legal != NULL && legal->type == MSGPACK_OBJECT_ARRAY ? legal->via.array.size : 0;
    char **actions = calloc(n + 1, sizeof *actions);
    if (actions == NULL) return -1;
    for (size_t i = 0; i < n; i++) {
        const msgpack_object *action = &legal->via.array.ptr[i];
        size_t size = action->type == MSGPACK_OBJECT_STR ? action->via.str.size : 0;
        if ((actions[i] = malloc(size + 1)) == NULL) break;
        if (size > 0) memcpy(actions[i], action->via.str.ptr, size);
        actions[i][size] = '\0';
    }
    int status = -1;
    if (n == 0 || actions[n - 1] != NULL) {
        request.legal = (const char *const *)actions;
        request.n_legal = n;
        status = five__send_action(request.id, bot->choose(&request, bot->state), out);
    }
    for (size_t i = 0; i < n; i++) free(actions[i]);
    free(actions);
    return status;
}

/* Handle one message: 1 to go on, 0 at match_end, -1 on a write error. */
static inline int five__handle(const five_bot *bot, const msgpack_object *message, int out) {
    const msgpack_object *type = five_get(message, "type");
    five_hook hook = NULL;
    if (five_is(type, "request")) return five__answer(bot, message, out) < 0 ? -1 : 1;
    if (five_is(type, "hello")) return five__send_hello(bot, out) < 0 ? -1 : 1;
    if (five_is(type, "match_end")) return 0;
    if (five_is(type, "match_start")) hook = bot->on_match_start;
    else if (five_is(type, "game_start")) hook = bot->on_game_start;
    else if (five_is(type, "game_end")) hook = bot->on_game_end;
    if (hook != NULL) hook(message, bot->state);
    return 1;  /* unknown messages are ignored */
}

/* Play on stdin/stdout until the arena ends the match or closes stdin.
   0 then; 1 if the input is not msgpack or a reply cannot be written. */
static inline int five_run(const five_bot *bot) {
    int out = dup(1), status = 0, more = 1;
    msgpack_unpacker unpacker;
    msgpack_unpacked message;
    if (out < 0 || dup2(2, 1) < 0 || !msgpack_unpacker_init(&unpacker, FIVE_READ_SIZE)) return 1;
    signal(SIGPIPE, SIG_IGN);  /* a closed pipe is an error to return, not a signal */
    msgpack_unpacked_init(&message);
    while (more) {
        if (!msgpack_unpacker_reserve_buffer(&unpacker, FIVE_READ_SIZE)) { status = 1; break; }
        ssize_t n = read(0, msgpack_unpacker_buffer(&unpacker),
                         msgpack_unpacker_buffer_capacity(&unpacker));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { status = n < 0; break; }  /* end of input: the match is over */
        msgpack_unpacker_buffer_consumed(&unpacker, (size_t)n);
        msgpack_unpack_return got = MSGPACK_UNPACK_CONTINUE;
        while (more && (got = msgpack_unpacker_next(&unpacker, &message)) == MSGPACK_UNPACK_SUCCESS) {
            int handled = five__handle(bot, &message.data, out);
            more = handled > 0;
            status = handled < 0;
        }
        if (more && got < 0) {  /* MSGPACK_UNPACK_PARSE_ERROR, MSGPACK_UNPACK_NOMEM_ERROR */
            five_log("five: the input is not msgpack (%d)", (int)got);
            status = 1;
            break;
        }
    }
    msgpack_unpacked_destroy(&message);
    msgpack_unpacker_destroy(&unpacker);
    close(out);
    return status;
}

#endif
