package dev.pinarena.allocator;

import dev.pinarena.registration.Access;

/**
 * Who may touch a buffer's memory: the local host only, or peers too. Each scope has chunks of its own,
 * registered with its own access rights, so a buffer of one never lies in a chunk of the other and a
 * remote key never reaches a local buffer.
 */
public enum BufferScope
{
    /** Local sends and receives only: chunks registered with {@link Access#LOCAL_WRITE}. */
    LOCAL,
    /** Exposed to peers for RDMA READ/WRITE: chunks registered with the configured remote access bits. */
    REMOTE;

    private static final BufferScope[] SCOPES = values();

    /** Number of scopes; scope-indexed arrays have this length. */
    static final int COUNT = SCOPES.length;

    /**
     * @param ordinal a scope's ordinal.
     * @return the scope, without the copy {@code values()} makes.
     */
    static BufferScope of(final int ordinal)
    {
        return SCOPES[ordinal];
    }
}
