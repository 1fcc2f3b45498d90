"""The exception a Python function raised inside a packed call, kept per thread until the failed
call's caller asks for it: TVM re-raises that exception itself, with graphrt's message (where it
was called from) as a note. packed.py remembers it; _lib.last_exception takes it."""
import threading

_RAISED = threading.local()


def remember(e, text):
    """Records exception `e`, reported to graphrt as `text`, for this thread's next failure."""
    _RAISED.pending = (e, text)


def take(message):
    """The exception behind a failed call's `message`, when a Python function raised it on this
    thread; the graphrt message becomes a note on it. Forgotten once asked for."""
    pending = getattr(_RAISED, "pending", None)
    _RAISED.pending = None
    if pending is None or pending[1] not in message:
        return None
    e = pending[0]
    if message != pending[1] and hasattr(e, "add_note"):
        e.add_note("graphrt: " + message)
    return e
