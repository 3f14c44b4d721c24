"""Merging a dependent CPU operation into the one pushed just before it (MXNet's engine bulk).

A program that pushes a chain of dependent operations faster than they run (a training
loop: forward, backward, update, forward...) pays the engine's bookkeeping for each: every
var queued on at push, released at completion.  With 12-16 vars an operation (an executor's
pass) that was 9-10 us an operation, 4% of an MNIST epoch.  Such an operation can instead
join the operation pushed just before it, which has not started: the two run as one, in push
order, on one thread, and the vars are granted once for all of them (and given back part by
part only when a thread waits, see below).

:func:`merge_into` decides and does it, under the engine lock.  It merges ``op`` into ``tail``
(the last operation pushed, still waiting for its vars or deferred, so no thread runs it yet)
only if that cannot change what runs before what:

- ``op`` depends on ``tail``: it writes a var ``tail`` uses, or reads one ``tail`` writes (an
  independent operation, readers of the same var included, is never merged: it may run in
  parallel);
- on every var ``op`` shares with ``tail``, nothing is queued after ``tail``;
- every other var of ``op``: ``tail`` claims it too, at the end of its queue if it is busy, as
  if ``tail`` had been pushed with it (then ``tail`` may wait for something only a later part
  needs; a chain's parts wait for each other anyway).  The deferred operation, which is ready
  and must stay so, takes only free ones;
- where ``op`` writes a var ``tail`` only reads, ``tail``'s claim becomes a write: its queued
  entry is the var's last, or it is the var's only reader;
- ``tail`` has fewer than :data:`max_parts` parts (the bulk size, :data:`MAX_PARTS` unless
  ``mx.engine.set_bulk_size`` or ``mx.engine.bulk`` changed it, see :mod:`.bulk`; 1 or less: no
  merging): the first part starts only once the vars of every later part are granted, so merging
  stays bounded.

A merged operation gives its vars back part by part, so that a wait for an earlier part's
output never waits for the later parts (one of them may block until that wait returns: a pushed
Python function that waits for an event the program sets after ``wait_to_read``; the plain
policy's wait returns there, and so must this one).  :func:`release_steps` lists, for each
part but the last, what the operation gives back once that part has run:

- a var no later part uses is released (a write claim, or a read claim);
- a var written for the last time by this part, that a later part still reads, keeps only a
  read claim (:meth:`Var.downgrade_write <lazynd.engine.var.Var.downgrade_write>`): its value
  is final, so waits for a read and other readers go on, while writers still wait for the
  later parts' reads.

A var given back is then the next operations' to claim while the merged operation runs its
later parts, which is only correct because none of those parts uses it.  The engine gives the
claims back with its lock held and removes them from the operation's ``reads`` and ``writes``,
so that these always hold exactly what the operation still claims.  A thread that runs a merged
operation for a wait (:mod:`.policy`, help while waiting) stops once the wait no longer needs
the parts left (what it waits for is ready, or waits only for others now), and hands them, as
the same operation, to the workers (:func:`drop_parts`).

The operation gives back only while a thread sleeps in a wait for a var (a wait marker is
queued): a later part can stall for good only on a thread that waits for the operation, and
such a thread sleeps there (a pusher held by the bounded backlog goes on by itself, see
:mod:`.policy`).  An operation queued behind a merged one, on a var it could give back, waits
for its end as before unless a thread waits, and a chain nobody waits on runs as it did, with
no lock taken and nothing computed between its parts.  The running operation counts the parts
that have run (``ran``) before it looks whether a thread waits; a thread that starts to wait
counts itself, with the engine lock, before it looks at ``ran``, and gives back for every
merged operation what the parts that have run no longer need (:func:`give_back_due`): one of
the two always sees the other.  :func:`release_steps` is computed once, when first needed.

Each part keeps its own function, input checks, outputs and name: a failing part records its
error on its own outputs, later parts that read them are skipped with that error, and the
profiler sees every part under its own name (see
:meth:`lazynd.engine.threaded.ThreadedEngine._run_parts`).
"""

from __future__ import annotations

from typing import cast

from .operation import Operation
from .var import Var

# parts a merged operation may hold by default; 8 removes most of the bookkeeping of a chain while
# its first part waits for the vars of at most 7 more operations
MAX_PARTS = 8
# parts a merged operation may hold now, for every thread (MXNet's bulk size; set by lazynd.engine.bulk):
# one module attribute, read once per merge, so the push path pays nothing more for it
max_parts = MAX_PARTS


def merge_into(tail: Operation, op: Operation) -> bool:
    """Make ``op`` the next part of ``tail`` if the rules above allow it (engine lock held)."""
    parts = tail.parts
    if parts is not None and len(parts) >= max_parts:
        return False
    access = tail.access
    if access is None:  # tail has not been merged into (parts is None)
        # the common refusal first, without building the map: op does not depend on tail
        if not op.depends_on(tail) or max_parts < 2:  # (a bulk size of 1 or less: no merging)
            return False
        access = dict.fromkeys(tail.reads, False)
        access.update(dict.fromkeys(tail.writes, True))
    waiting = tail.wait > 0  # else tail is the deferred operation: ready, and must stay so
    shared = False
    for v in op.reads:
        mode = access.get(v)
        if mode is None:
            if not waiting and not v.ready_for_read():
                return False
        else:
            if not v.nothing_queued_after(tail):
                return False
            shared = shared or mode  # reading what tail writes: op waits for tail
    for v in op.writes:
        mode = access.get(v)
        if mode is None:
            if not waiting and not v.ready_for_write():
                return False
        else:
            if not (v.nothing_queued_after(tail) if mode else v.can_upgrade_read(tail)):
                return False  # (a read of tail's beside other readers cannot become a write now)
            shared = True
    if not shared:
        return False

    if parts is None:
        # the first merge: the var lists become tail's own (they may be its pusher's lists)
        tail.parts = parts = [(tail.fn, tail.args, tail.checks, tail.writes, tail.name)]
        tail.reads, tail.writes = list(tail.reads), list(tail.writes)
        tail.access = access
        tail.ran = tail.given = 0
        tail.steps = None
    reads, writes = cast(list, tail.reads), cast(list, tail.writes)
    for v in op.reads:
        if v not in access:
            v.request_read(tail)  # if busy, tail waits for it too, behind everything pushed before
            access[v] = False
            reads.append(v)
    for v in op.writes:
        mode = access.get(v)
        if mode is None:
            v.request_write(tail)
            access[v] = True
            writes.append(v)
        elif mode is False:  # tail's read becomes a write
            v.upgrade_read(tail)
            access[v] = True
            reads.remove(v)
            writes.append(v)
    parts.append((op.fn, op.args, op.checks, op.writes, op.name))
    return True


def release_steps(op: Operation) -> dict[int, tuple[list[Var], list[Var], list[Var]]]:
    """What the merged ``op`` gives back after each of its parts but the last (see above).

    Part index -> ``(downgrades, read_releases, write_releases)``: the vars whose write claim
    becomes a read, whose read claim is released, whose write claim is released once that
    part has run; parts after which nothing is given back are left out.  What the last part
    uses is released when the operation completes.
    """
    parts = cast(list, op.parts)
    last_checks, last_writes = parts[-1][2], parts[-1][3]
    used = set(last_checks).union(last_writes)  # by a later part
    written = set(last_writes)  # by a later part
    steps: dict[int, tuple[list[Var], list[Var], list[Var]]] = {}
    for index in range(len(parts) - 2, -1, -1):  # from the last part back: "later" is known
        checks, writes = parts[index][2], parts[index][3]
        downgrades: list[Var] = []
        read_releases: list[Var] = []
        write_releases: list[Var] = []
        for v in writes:
            if v not in used:
                write_releases.append(v)
                used.add(v)
                written.add(v)
            elif v not in written:  # read later, and never written again
                downgrades.append(v)
                written.add(v)
        for v in checks:
            if v not in used:  # (a var this part also writes is in ``used`` by now)
                # a read claim: only ever read, or downgraded after its last write
                read_releases.append(v)
                used.add(v)
        if downgrades or read_releases or write_releases:
            steps[index] = (downgrades, read_releases, write_releases)
    return steps


def give_back_due(op: Operation, ready: list[Operation]) -> None:
    """Give back what the merged ``op`` no longer needs after the parts that have run (``op.ran``)
    and not given back yet (engine lock held); operations this makes ready are appended to
    ``ready``.  ``op.reads`` and ``op.writes`` keep holding what it still claims."""
    ran = op.ran
    if op.given >= ran:
        return
    steps = op.steps
    if steps is None:
        steps = op.steps = release_steps(op)
    reads, writes = cast(list, op.reads), cast(list, op.writes)  # the merged operation's own lists
    for index in range(op.given, ran):
        step = steps.get(index)
        if step is None:
            continue
        downgrades, read_releases, write_releases = step
        for v in downgrades:
            v.downgrade_write(ready)
            writes.remove(v)
            reads.append(v)
        Var.release_all(read_releases, write_releases, ready)
        for v in read_releases:
            reads.remove(v)
        for v in write_releases:
            writes.remove(v)
    op.given = ran


def drop_parts(op: Operation) -> None:
    """Leave out of the merged ``op`` the parts that have run, after which it has given back what
    :func:`release_steps` lists (engine lock held): the others run later, as ``op``."""
    count = op.ran
    assert op.given == count
    op.parts = op.parts[count:]  # type: ignore[index]
    op.ran = op.given = 0
    op.steps = None
