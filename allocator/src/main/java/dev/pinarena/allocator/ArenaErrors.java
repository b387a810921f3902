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
            "): in " + chunk + " but in a free page that holds no buffer — double free or never allocated");
    }

    static InteriorPointerException insideBlock(final long address, final Slab slab)
    {
        final long offset = (address - slab.base) % slab.blockSize;
        return new InteriorPointerException(address, "free(0x" + Long.toHexString(address) + "): an interior pointer " +
            offset + " bytes into the " + slab.blockSize + "-byte block at 0x" + Long.toHexString(address - offset));
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
}
