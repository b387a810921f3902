package dev.pinarena.messaging;

import dev.pinarena.allocator.PinnedArena;
import dev.pinarena.registration.ucx.UcxRegistrar;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpAmRecvCallback;
import org.openucx.jucx.ucp.UcpConnectionRequest;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpListener;
import org.openucx.jucx.ucp.UcpListenerConnectionHandler;
import org.openucx.jucx.ucp.UcpListenerParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * One process's messaging setup: a UCX context with active messages and RMA, a {@link UcxRegistrar} on it, a
 * {@link PinnedArena} whose chunks that registrar maps once each, and one worker.
 * <p>
 * Buffers for sends, receives, puts and gets come from {@link #arena()}; {@link #memoryOf(long)} finds the UCX
 * memory handle of any arena address in O(1) (arena address → chunk region → registrar slot), so no request
 * ever makes UCX register memory after the arena's chunks are mapped.
 * <p>
 * Threads: the worker is single-threaded ({@code UCS_THREAD_MODE_SINGLE} semantics): call everything except
 * {@link #arena()} allocation from the thread that progresses the worker.
 */
public final class ArenaNode implements AutoCloseable
{
    private final UcpContext context;
    private final UcxRegistrar registrar;
    private final PinnedArena arena;
    private final UcpWorker worker;
    private final HostMemoryParams params = new HostMemoryParams();
    private UcpListener listener;
    private PeerFailureHandler peerFailureHandler;

    private ArenaNode(final UcpContext context, final UcxRegistrar registrar, final PinnedArena arena, final UcpWorker worker)
    {
        this.context = context;
        this.registrar = registrar;
        this.arena = arena;
        this.worker = worker;
    }

    /**
     * @param config device, transports and arena settings.
     * @return a node; close it to release the arena, the worker and the context.
     */
    public static ArenaNode open(final NodeConfig config)
    {
        Objects.requireNonNull(config, "config");
        final UcpParams params = new UcpParams().requestAmFeature().requestRmaFeature();
        if (config.netDevices() != null)
        {
            params.setConfig("NET_DEVICES", config.netDevices());
        }
        if (config.transports() != null)
        {
            params.setConfig("TLS", config.transports());
        }
        if (config.memoryEvents() != null)
        {
            params.setConfig("MEM_EVENTS", config.memoryEvents() ? "yes" : "no");
        }
        final UcpContext context = new UcpContext(params);
        UcxRegistrar registrar = null;
        PinnedArena arena = null;
        try
        {
            registrar = UcxRegistrar.open(context, config.budget());
            arena = PinnedArena.open(registrar, config.arena());
            final UcpWorker worker = context.newWorker(new UcpWorkerParams());
            return new ArenaNode(context, registrar, arena, worker);
        }
        catch (final RuntimeException ex)
        {
            if (arena != null)
            {
                arena.close();
            }
            if (registrar != null)
            {
                registrar.close();
            }
            context.close();
            throw ex;
        }
    }

    /**
     * @return the arena every buffer comes from.
     */
    public PinnedArena arena()
    {
        return arena;
    }

    /**
     * @return the registrar that mapped the arena's chunks in UCX (and counts its {@code ucp_mem_map} calls).
     */
    public UcxRegistrar registrar()
    {
        return registrar;
    }

    /**
     * @return the worker; progress it from the owning thread.
     */
    public UcpWorker worker()
    {
        return worker;
    }

    /**
     * @param address any address inside an arena buffer.
     * @return the UCX memory handle of its chunk, in O(1).
     * @throws dev.pinarena.allocator.UnknownAddressException if the address is not in the arena.
     */
    public UcpMemory memoryOf(final long address)
    {
        return registrar.memory(arena.region(address));
    }

    /**
     * Listens for connections (through UCX's socket-address connection manager: rdmacm on RDMA devices).
     *
     * @param address local address and port.
     * @param handler called from {@link #progress()} for each connection request; pass it to
     *                {@link #accept(UcpConnectionRequest)}.
     */
    public void listen(final InetSocketAddress address, final UcpListenerConnectionHandler handler)
    {
        if (listener != null)
        {
            throw new IllegalStateException("already listening on " + listener.getAddress());
        }
        listener = worker.newListener(new UcpListenerParams().setSockAddr(address).setConnectionHandler(handler));
    }

    /**
     * @param request a connection request from the listener.
     * @return the endpoint to the peer that asked.
     */
    public ArenaEndpoint accept(final UcpConnectionRequest request)
    {
        return new ArenaEndpoint(this, new UcpEndpointParams().setConnectionRequest(request));
    }

    /**
     * @param address the peer's listening address.
     * @return an endpoint to it (the connection completes while the worker progresses).
     */
    public ArenaEndpoint connect(final InetSocketAddress address)
    {
        return new ArenaEndpoint(this, new UcpEndpointParams().setSocketAddress(address));
    }

    /**
     * Sets what is told when an endpoint's peer fails (see {@link ArenaEndpoint}); without one, the failure is
     * only recorded on the endpoint ({@link ArenaEndpoint#failed()}) and on its requests.
     *
     * @param handler called from {@link #progress()}, or null.
     */
    public void onPeerFailure(final PeerFailureHandler handler)
    {
        peerFailureHandler = handler;
    }

    void peerFailed(final ArenaEndpoint endpoint, final int status, final String message)
    {
        if (peerFailureHandler != null)
        {
            peerFailureHandler.onPeerFailure(endpoint, status, message);
        }
    }

    /**
     * Sets the handler of one active-message id.
     *
     * @param id       active-message id.
     * @param callback called from {@link #progress()}.
     */
    public void onMessage(final int id, final UcpAmRecvCallback callback)
    {
        worker.setAmRecvHandler(id, callback);
    }

    /**
     * Receives the data of a rendezvous active message into an arena buffer, with its chunk's memory handle.
     *
     * @param dataHandle {@code UcpAmData.getDataHandle()} of a message whose data is not yet valid.
     * @param address    arena buffer.
     * @param length     bytes, the message's length.
     * @param callback   completion, or null to poll the request.
     * @return the request.
     */
    public UcpRequest receiveInto(final long dataHandle, final long address, final long length, final UcxCallback callback)
    {
        return worker.recvAmDataNonBlocking(dataHandle, address, length, callback, params.with(memoryOf(address)));
    }

    /**
     * Progresses the worker: completes requests, calls message handlers and, for an endpoint whose peer failed,
     * its error handler (the failure stays on that endpoint; see {@link ArenaEndpoint}).
     *
     * @return the number of events the worker progressed.
     * @throws Exception what UCX reports for the worker itself.
     */
    public int progress() throws Exception
    {
        return worker.progress();
    }

    /**
     * Progresses the worker until the request completes.
     *
     * @param request a request of this worker, or null (already complete).
     * @throws Exception what UCX reports, including the request's failure status.
     */
    public void await(final UcpRequest request) throws Exception
    {
        if (request != null)
        {
            worker.progressRequest(request);
        }
    }

    HostMemoryParams params()
    {
        return params;
    }

    /**
     * Closes the listener, the worker, the arena (buffers still allocated are released with it: nothing may use
     * them after this), the registrar (unmapping every chunk from UCX) and the context.
     */
    public void close()
    {
        if (listener != null)
        {
            listener.close();
        }
        worker.close();
        arena.close(true);
        registrar.close();
        context.close();
    }
}
