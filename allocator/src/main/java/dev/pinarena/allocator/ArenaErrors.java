package dev.pinarena.allocator;

/**
 * The exceptions of a bad allocate, free or lookup, with their messages: built here, out of line, so the hot
 * paths carry no string building, only a call that is never taken when the input is good.
 */
final class ArenaErrors
{
    private ArenaErrors()
    {
    }

    static ArenaClosedException allocateAfterClose(final long size)
    {
        return new ArenaClosedException(0, "allocate(" + size + ") after the arena was closed");
    }

    static InvalidSizeException invalidSize(final long size, final long capBytes)
    {
        return new InvalidSizeException(0, "cannot allocate " + size + " bytes: " +
            (size <= 0 ? "size must be positive" : "larger than the arena cap of " + capBytes));
    }

    static InvalidAlignmentException invalidAlignment(final long size, final int alignment)
    {
        return new InvalidAlignmentException(0, "cannot allocate " + size + " bytes aligned to " + alignment +
            ": alignment must be a power of two up to the " + SizeClasses.ARENA_PAGE_SIZE + "-byte arena page");
    }

    static ArenaClosedException closed(final String operation, final long address)
    {
        return new ArenaClosedException(address, operation + "(0x" + Long.toHexString(address) + ") after the arena was closed");
    }

    static UnknownAddressException notInArena(final long address)
    {
        return new UnknownAddressException(address, "free(0x" + Long.toHexString(address) +
            "): not inside any chunk of this arena — never allocated here");
    }

    static DoubleFreeException inReleasedChunk(final long address, final long chunkBase)
    {
        return new DoubleFreeException(address, "free(0x" + Long.toHexString(address) + "): in the dedicated chunk at 0x" +
            Long.toHexString(chunkBase) + ", freed and then released at the arena's cap (double free)");
    }

    static UnknownAddressException notInArena(final String operation, final long address)
    {
        return new UnknownAddressException(address, operation + "(0x" + Long.toHexString(address) +
            "): not inside any chunk of this arena");
    }

    static InteriorPointerException insideRun(final long address)
    {
        return new InteriorPointerException(address, "free(0x" + Long.toHexString(address) +
            "): an interior pointer into a page run, not its first byte");
    }

    static InteriorPointerException insideRun(final long address, final long runAddress)
    {
        return new InteriorPointerException(address, "free(0x" + Long.toHexString(address) +
            "): an interior pointer into the page run at 0x" + Long.toHexString(runAddress));
    }

    static DoubleFreeException runAlreadyFree(final long address)
    {
        return new DoubleFreeException(address, "free(0x" + Long.toHexString(address) +
            "): a page run that is already free (double free)");
    }

    static UnknownAddressException inFreePage(final long address, final ArenaChunk chunk)
    {
        return new UnknownAddressException(address, "free(0x" + Long.toHexString(address) +
            "): in " + chunk + " but in a page that never held a buffer — never allocated");
    }

    static DoubleFreeException inFreedPage(final long address, final ArenaChunk chunk)
    {
        return new DoubleFreeException(address, "free(0x" + Long.toHexString(address) +
            "): in a page of " + chunk + " whose buffer was freed and that holds none now (double free)");
    }

    static DoubleFreeException insideFreeRun(final long address, final long runAddress)
    {
        return new DoubleFreeException(address, "free(0x" + Long.toHexString(address) +
            "): inside the page run at 0x" + Long.toHexString(runAddress) + ", which is free (double free)");
    }

    static InteriorPointerException insideBlock(final long address, final Slab slab)
    {
        final long offset = (address - slab.base) % slab.blockSize;
        return new InteriorPointerException(address, "free(0x" + Long.toHexString(address) + "): an interior pointer " +
            offset + " bytes into the " + slab.blockSize + "-byte block at 0x" + Long.toHexString(address - offset));
    }

    static DoubleFreeException insideFreeBlock(final long address, final Slab slab)
    {
        final long offset = (address - slab.base) % slab.blockSize;
        return new DoubleFreeException(address, "free(0x" + Long.toHexString(address) + "): " + offset +
            " bytes into the " + slab.blockSize + "-byte block at 0x" + Long.toHexString(address - offset) +
            ", which is free (double free)");
    }

    static UnknownAddressException inSlabTail(final long address, final Slab slab)
    {
        return new UnknownAddressException(address, "free(0x" + Long.toHexString(address) +
            "): in the unused tail of a slab of " + slab.blockSize + "-byte blocks — never allocated");
    }

    static DoubleFreeException blockNotAllocated(final long address, final Slab slab)
    {
        return new DoubleFreeException(address, "free(0x" + Long.toHexString(address) + "): the " + slab.blockSize +
            "-byte block is not allocated — freed twice (double free), or never handed out");
    }

    static InteriorPointerException insideDedicated(final long address, final ArenaChunk chunk)
    {
        return new InteriorPointerException(address, "free(0x" + Long.toHexString(address) +
            "): an interior pointer into the dedicated buffer at 0x" + Long.toHexString(chunk.base));
    }

    static DoubleFreeException insideFreeDedicated(final long address, final ArenaChunk chunk)
    {
        return new DoubleFreeException(address, "free(0x" + Long.toHexString(address) +
            "): inside the dedicated buffer at 0x" + Long.toHexString(chunk.base) + ", which is free (double free)");
    }

    static DoubleFreeException dedicatedAlreadyFree(final long address, final ArenaChunk chunk)
    {
        return new DoubleFreeException(address, "free(0x" + Long.toHexString(address) +
            "): the dedicated " + chunk.size + "-byte buffer is already free (double free)");
    }

    static UnknownAddressException noBufferStartsThere(final String operation, final long address)
    {
        return new UnknownAddressException(address, operation + "(0x" + Long.toHexString(address) + "): no buffer starts there");
    }

    static RegistrationGoneException registrationGone(final long address, final dev.pinarena.registration.Region region)
    {
        return new RegistrationGoneException(address, "0x" + Long.toHexString(address) + ": the registration of its chunk (" +
            region + ") was deregistered behind the arena's back — its keys name nothing any more");
    }

    static StaleHandleException staleHandle(final long address, final int generation, final int current)
    {
        return new StaleHandleException(address, "freeHandle(0x" + Long.toHexString(address) + " generation " +
            generation + "): the buffer was freed and handed out again since (now generation " + current +
            ") — a stale handle; nothing was freed");
    }

    static UnknownAddressException noAllocatedBuffer(final String operation, final long address)
    {
        return new UnknownAddressException(address, operation + "(0x" + Long.toHexString(address) +
            "): no allocated buffer starts there (freed, interior, or never handed out)");
    }

    static NotRemoteBufferException notRemote(final long address)
    {
        return new NotRemoteBufferException(address, "rkey(0x" + Long.toHexString(address) +
            "): the buffer is local-only (allocate it with allocateRemote to expose it to peers)");
    }

    static NoRemoteKeyException noRemoteKeys(final long address, final String reason)
    {
        return new NoRemoteKeyException(address, "rkey(0x" + Long.toHexString(address) + "): no remote keys: " +
            reason + " (use a verbs registrar to expose buffers to peers)");
    }

    static NoRemoteKeyException notLiveRemoteBuffer(final long address)
    {
        return new NoRemoteKeyException(address, "rkey(0x" + Long.toHexString(address) +
            "): not the start of a live remote buffer (each remote buffer has a key of its own)");
    }

    static IllegalArgumentException tooLargeToWrap(final long address, final long usable)
    {
        return new IllegalArgumentException("wrap(0x" + Long.toHexString(address) + "): " + usable +
            " bytes do not fit a PinnedBuffer");
    }

    static IllegalArgumentException viewLeavesChunk(final long address, final int length, final ArenaChunk chunk)
    {
        return new IllegalArgumentException("byteBuffer(0x" + Long.toHexString(address) + ", " + length +
            "): the range leaves its chunk " + chunk);
    }

    static IllegalArgumentException notArenaView(final java.nio.ByteBuffer view)
    {
        return new IllegalArgumentException("byteBuffer: only a view this arena made can be re-aimed: " + view);
    }

    static IllegalStateException stillAttached(final long address)
    {
        return new IllegalStateException("PinnedBuffer still holds 0x" + Long.toHexString(address) +
            ": close it before wrapping a new buffer");
    }

    static BuffersOutstandingException buffersOutstanding(final long outstanding)
    {
        return new BuffersOutstandingException(0, "close(): " + outstanding +
            " buffers are still allocated; free them first, or close(true) to release the memory anyway");
    }
}
