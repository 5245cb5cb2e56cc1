/*
 * @NAME@: a Five Arena bot.  It plays a random legal move; your strategy goes
 * in strategy().  The SDK is five.h beside this file (docs/bots.md#c).
 * Build: cc -O2 -std=c11 -Wall -o bot bot.c -lmsgpackc
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "five.h"

static int strategy(const msgpack_object *observation, const char *const *legal,
                    size_t n_legal, int64_t move_ms, int64_t bank_ms) {
    (void)observation, (void)legal, (void)move_ms, (void)bank_ms;
    /* Your strategy goes here.  Logs go to stderr: five_log() and printf do
       (the SDK points stdout at stderr); the arena keeps 4 KiB of each game. */
    return (int)((size_t)rand() % n_legal);
}

static int choose(const five_request *request, void *state) {
    (void)state;
    return strategy(
        /* What your seat may see now: the envelope (game, seat, players, to_move,
           phase, hand, hand_sizes) and the game's fields (docs/rules/<game>.md):
           five_get(request->observation, "phase"), ... */
        request->observation,
        /* The legal actions: strings in the game's action grammar, never empty. */
        request->legal, request->n_legal,
        /* The time: move_ms is free for this move; bank_ms more (for the rest
           of this game) may be borrowed before the move is a timeout. */
        request->move_ms, request->bank_ms);
}

static void on_game_end(const msgpack_object *message, void *state) {
    (void)message, (void)state;  /* scores, places and the reveal of a finished game */
}

int main(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    srand((unsigned)now.tv_nsec ^ (unsigned)getpid());
    five_bot bot = {.name = "@NAME@", .version = "1", .author = "",
                    .choose = choose, .on_game_end = on_game_end};
    return five_run(&bot);
}
