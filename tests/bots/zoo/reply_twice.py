"""Zoo: answers every request twice, with the same id (the second answer is
stale by the time the arena reads it).  The first answer is always legal."""


from rawbot import Message, play, serve


def reply_twice(request: Message) -> None:
    play(request)
    play(request, len(request["legal"]) - 1)


if __name__ == "__main__":
    serve("zoo-reply-twice", reply_twice)
