/**
 * Active messages and RDMA put/get from pinned arena buffers over UCX (JUCX): {@link
 * dev.pinarena.messaging.ArenaNode} (context, registrar, arena, worker) and {@link
 * dev.pinarena.messaging.ArenaEndpoint} (one peer).
 *
 * <h2>What is trusted of a peer</h2>
 * <ul>
 *   <li><b>Who may connect.</b> A listener accepts whoever reaches its address; the module authenticates nobody.
 *       Listen on an interface only trusted peers reach (the RDMA fabric, a private network). A peer that can
 *       connect can send messages to every handler and, with a key it was given, read or write the exposed
 *       buffer that key reaches.</li>
 *   <li><b>Bytes it sends are checked.</b> Every decoder of peer bytes ({@link
 *       dev.pinarena.messaging.RemoteBuffer#decode}, {@link dev.pinarena.messaging.ArenaEndpoint#decodeRemote})
 *       bounds-checks every length and offset in {@code long} before it allocates or copies, and refuses
 *       anything else with {@link dev.pinarena.messaging.MalformedPeerInputException}: a claimed length costs at
 *       most {@link dev.pinarena.messaging.RemoteBuffer#MAX_KEY_LENGTH} bytes, never what the peer claims.</li>
 *   <li><b>Its packed remote keys are checked as far as they can be.</b> UCX's {@code ucp_ep_rkey_unpack}
 *       parses a packed key without validating it: bytes UCX did not pack can crash the process inside UCX.
 *       What can be checked is: the key's length (bounded when decoded) and its origin: {@link
 *       dev.pinarena.messaging.ArenaEndpoint#unpackRemoteKey} unpacks only a descriptor decoded on that same
 *       endpoint, i.e. sent by the peer it is connected to; a descriptor made locally, decoded without an
 *       endpoint or on another endpoint is refused ({@link dev.pinarena.messaging.ForeignRemoteKeyException})
 *       before UCX sees it. The key's contents cannot be checked: a connected peer that sends a well-formed
 *       descriptor with a forged key is trusted with the process, as UCX itself trusts it.</li>
 *   <li><b>Its failure is contained.</b> A peer that dies or resets the connection fails its own endpoint only:
 *       its outstanding requests complete with an error status, {@link
 *       dev.pinarena.messaging.ArenaNode#onPeerFailure} is told, new requests on it throw {@link
 *       dev.pinarena.messaging.PeerFailedException}, and {@link dev.pinarena.messaging.ArenaNode#progress()}
 *       goes on for the other endpoints.</li>
 *   <li><b>What we expose is bounded.</b> Keys reach remote-scope arena chunks only (never local-scope buffers
 *       or allocator metadata); a peer holding one can read and write those chunks until the arena closes.</li>
 * </ul>
 *
 * <h2>Garbage per message</h2>
 * The endpoint's send, put and get allocate nothing of their own (parameters are reused, memory handles found
 * in arrays); JUCX allocates a {@code UcpRequest} per request: 56 B per send or put and 104 B per get of
 * 64 B over tcp ({@code MessagingAllocationLoopbackTest}). JUCX's only request-free calls,
 * {@code putNonBlockingImplicit} and {@code getNonBlockingImplicit}, take no memory handle, so UCX would look
 * up (and on first use register) arena memory in its own registration cache: this module does not use them.
 */
package dev.pinarena.messaging;
