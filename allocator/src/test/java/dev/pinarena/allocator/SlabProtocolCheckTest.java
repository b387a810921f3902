package dev.pinarena.allocator;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every interleaving of {@link Slab}'s cross-thread free protocol, explored exhaustively on a model of its
 * atomic steps (as the class Javadoc lists them): two threads each free one block of a slab while its owner
 * drains its pending stack and releases the emptied slab, the pool formats it for a second owner, and that
 * owner drains too. Checked in every reachable state: a slab is never pushed onto a stack it is already on,
 * an owner never drains a slab it released, and at the end no remote free is lost (a freed bit is never left
 * without the slab on its owner's stack).
 * <p>
 * Why a model and not Lincheck: Lincheck (MPL-2.0) runs real code under its bytecode-instrumenting model
 * checker, but a {@code Slab} is only formatted over an {@code ArenaChunk} and pushes onto a {@code ThreadHeap}
 * of a live arena; its protocol is a handful of atomic steps, so all interleavings of those steps are few
 * enough to enumerate here, with no dependency. The steps are the Javadoc's; a change to the protocol must
 * change them (and the pre-fix variant shows the checker sees the bug fixed by fde38d8).
 */
class SlabProtocolCheckTest
{
    private static final int FREERS = 2;
    private static final int OWNER_ROUNDS = 3;

    /** One state of the slab, the two stacks and every thread's position; copied at each branch. */
    private static final class State
    {
        final boolean claimBeforeRelease;
        boolean[] inUse = {true, true};
        boolean[] remoteFreed = new boolean[FREERS];
        int pending;
        int used = FREERS;
        int owner; // 0: the first heap, 1: the heap the pool formatted it for
        boolean released;
        boolean formatted;
        boolean[] onStack = new boolean[2];
        int[] freerPc = new int[FREERS];
        int ownerPc;
        int ownerRounds;
        int poolPc;
        int secondPc;
        int secondRounds;

        State(final boolean claimBeforeRelease)
        {
            this.claimBeforeRelease = claimBeforeRelease;
        }

        State copy()
        {
            final State s = new State(claimBeforeRelease);
            s.inUse = inUse.clone();
            s.remoteFreed = remoteFreed.clone();
            s.pending = pending;
            s.used = used;
            s.owner = owner;
            s.released = released;
            s.formatted = formatted;
            s.onStack = onStack.clone();
            s.freerPc = freerPc.clone();
            s.ownerPc = ownerPc;
            s.ownerRounds = ownerRounds;
            s.poolPc = poolPc;
            s.secondPc = secondPc;
            s.secondRounds = secondRounds;
            return s;
        }

        /** @return the threads that can take a step: freers 0..1, 2 the owner, 3 the pool, 4 the second owner. */
        List<Integer> enabled()
        {
            final List<Integer> threads = new ArrayList<>();
            for (int i = 0; i < FREERS; i++)
            {
                if (freerPc[i] < 4)
                {
                    threads.add(i);
                }
            }
            if (ownerRounds < OWNER_ROUNDS)
            {
                threads.add(FREERS);
            }
            if (released && poolPc < 2)
            {
                threads.add(FREERS + 1);
            }
            if (formatted && secondRounds < OWNER_ROUNDS)
            {
                threads.add(FREERS + 2);
            }
            return threads;
        }

        /** One atomic step of a thread; throws AssertionError on a broken invariant. */
        void step(final int thread)
        {
            if (thread < FREERS)
            {
                freerStep(thread);
            }
            else if (thread == FREERS)
            {
                ownerStep();
            }
            else if (thread == FREERS + 1)
            {
                // format for the second heap: the owner first, then pending = 0 (Slab#format)
                if (poolPc++ == 0)
                {
                    owner = 1;
                    inUse = new boolean[FREERS];
                    remoteFreed = new boolean[FREERS];
                    used = 0;
                }
                else
                {
                    pending = 0;
                    formatted = true;
                }
            }
            else
            {
                drainStep(1);
            }
        }

        private void freerStep(final int block)
        {
            switch (freerPc[block])
            {
                case 0 -> // step 1: inUse and remoteFreed checked (acquire loads)
                {
                    if (!inUse[block] || remoteFreed[block])
                    {
                        throw new AssertionError("a first free of block " + block + " was taken for a double free");
                    }
                    freerPc[block] = 1;
                }
                case 1 -> // step 3: the atomic OR of the block's bit
                {
                    remoteFreed[block] = true;
                    freerPc[block] = 2;
                }
                case 2 -> // step 4: CAS pending 0 -> 1; the winner pushes
                {
                    if (pending == 0)
                    {
                        pending = 1;
                        freerPc[block] = 3;
                    }
                    else
                    {
                        freerPc[block] = 4;
                    }
                }
                default -> // the push onto the owner read now (slab.heap)
                {
                    if (onStack[owner])
                    {
                        throw new AssertionError("the slab was pushed onto heap " + owner + "'s stack while on it");
                    }
                    onStack[owner] = true;
                    freerPc[block] = 4;
                }
            }
        }

        private void ownerStep()
        {
            if (ownerPc < 3)
            {
                drainStep(0);
                return;
            }
            // the release check: an emptied slab goes back to the pool
            if (used == 0 && !released && owner == 0 && (!claimBeforeRelease || pending == 0))
            {
                if (claimBeforeRelease)
                {
                    pending = 1; // claimForRelease's CAS won
                }
                released = true;
            }
            ownerPc = 0;
            ownerRounds++;
        }

        /** The drain of heap {@code heap}: pop, clearPending, collect (one step each). */
        private void drainStep(final int heap)
        {
            final int pc = heap == 0 ? ownerPc : secondPc;
            int next = pc + 1;
            switch (pc)
            {
                case 0 ->
                {
                    if (onStack[heap])
                    {
                        onStack[heap] = false;
                        if (owner != heap)
                        {
                            throw new AssertionError("heap " + heap + " drained a slab it released (now heap " + owner + "'s)");
                        }
                    }
                    else
                    {
                        next = 3; // nothing pending
                    }
                }
                case 1 -> pending = 0;
                default ->
                {
                    for (int b = 0; b < FREERS; b++)
                    {
                        if (remoteFreed[b])
                        {
                            remoteFreed[b] = false;
                            if (inUse[b])
                            {
                                inUse[b] = false;
                                used--;
                            }
                        }
                    }
                }
            }
            if (heap == 0)
            {
                ownerPc = next;
            }
            else if (next == 3)
            {
                secondPc = 0;
                secondRounds++;
            }
            else
            {
                secondPc = next;
            }
        }

        void checkEnd()
        {
            for (int b = 0; b < FREERS; b++)
            {
                if (remoteFreed[b] && !onStack[owner])
                {
                    throw new AssertionError("block " + b + "'s remote free is lost: its bit is set, the slab on no stack");
                }
            }
        }
    }

    private long interleavings;
    private String trace;

    private void explore(final State state, final StringBuilder path)
    {
        final List<Integer> threads = state.enabled();
        if (threads.isEmpty())
        {
            interleavings++;
            state.checkEnd();
            return;
        }
        for (final int thread : threads)
        {
            final State next = state.copy();
            final int length = path.length();
            path.append(thread);
            try
            {
                next.step(thread);
                explore(next, path);
            }
            catch (final AssertionError broken)
            {
                if (trace == null)
                {
                    trace = path + ": " + broken.getMessage();
                }
                throw broken;
            }
            finally
            {
                path.setLength(length);
            }
        }
    }

    @Test
    void everyInterleavingKeepsTheProtocol()
    {
        explore(new State(true), new StringBuilder());
        System.out.println("Slab protocol: " + interleavings + " interleavings, every one correct");
        assertTrue(interleavings > 10_000, "interleavings explored: " + interleavings);
    }

    @Test
    void releaseWithoutTheClaimLosesTheSlabToALatePush()
    {
        // Before fde38d8 the owner released an emptied slab without winning the pending CAS first.
        final AssertionError broken = org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
            () -> explore(new State(false), new StringBuilder()));
        System.out.println("Slab protocol without the claim: " + trace);
        assertEquals(broken.getMessage(), trace.substring(trace.indexOf(": ") + 2));
    }
}
