package dev.pinarena.allocator;

/**
 * How the key a peer uses to reach a remote-scope buffer ({@link PinnedArena#rkey(long)}) is made. Asked for
 * with {@link ArenaConfig#withRemoteKeys(RemoteKeyMode)}; the mode an arena actually uses, and why, is
 * {@link PinnedArena#remoteKeyMode()} and {@link PinnedArena#remoteKeyReason()}.
 */
public enum RemoteKeyMode
{
    /**
     * A type-1 memory window bound to exactly the buffer; revoked (rebound to nothing, confirmed by the device)
     * when the buffer is freed, before its bytes are zeroed or reused. Two work requests per buffer, no system
     * call on hardware. Used only where the device keeps a peer inside a window's bounds (checked once, at the
     * first remote chunk); elsewhere the arena falls back to {@link #MR}. The default.
     */
    WINDOW,
    /**
     * A registration ({@code ibv_reg_mr}) of exactly the buffer: the same reach as {@link #WINDOW}, at the
     * price of a registration per allocation and a deregistration per free.
     */
    MR,
    /**
     * The remote chunk's own key, valid as long as the chunk: no cost per buffer, but a peer holding one
     * buffer's key reaches every remote buffer of that chunk, and keeps reaching a freed buffer's bytes after
     * they were handed to someone else (zeroed on free by default).
     */
    CHUNK,
    /**
     * No keys for peers: the registrar is not verbs (io_uring and mlock pin memory but make no keys; UCX makes
     * its own packed keys of whole chunks). {@link PinnedArena#rkey(long)} throws {@link NoRemoteKeyException}.
     */
    NONE
}
