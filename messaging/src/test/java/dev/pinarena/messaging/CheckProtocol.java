package dev.pinarena.messaging;

/**
 * The active messages of the two-node check: the receiver publishes a remote buffer, the sender sends data,
 * puts and gets, and the receiver checks every byte and acknowledges with its registration count.
 * Headers are four longs: sequence, length, seed, unused (requests) or sequence, result, the receiver's
 * ucp_mem_map calls and its ibv_reg_mr calls ({@link VerbsRegistrationCounter#NOT_COUNTED} when not counted) (ACK).
 */
final class CheckProtocol
{
    /** Receiver to sender: the encoded {@link RemoteBuffer} as data. */
    static final int HELLO = 1;
    /** Sender to receiver: data to check against the pattern. */
    static final int DATA = 2;
    /** Sender to receiver: check the remote buffer (after a put). */
    static final int CHECK_PUT = 3;
    /** Sender to receiver: fill the remote buffer (before a get). */
    static final int FILL = 4;
    /** Receiver to sender: the outcome. */
    static final int ACK = 5;
    /** Sender to receiver: stop. */
    static final int BYE = 6;

    static final int HEADER_LENGTH = 32;
    static final long OK = -1;
    /** The largest message: buffers of this size are allocated once on each side. */
    static final int MAX_MESSAGE = 4 << 20;
    /** Sizes every round sends, puts and gets: the range's ends and unaligned sizes between. */
    static final int[] SIZES = {64, 100, 4096, 65536 + 7, 1 << 20, MAX_MESSAGE};

    private CheckProtocol()
    {
    }
}
