package dev.pinarena.messaging;

import dev.pinarena.allocator.ArenaConfig;
import dev.pinarena.registration.PinBudget;

import java.util.Objects;

/**
 * How an {@link ArenaNode} sets up UCX and its arena. Immutable; {@code with…} methods return a copy.
 * <p>
 * Device and transports are UCX configuration values ({@code UCX_NET_DEVICES}, {@code UCX_TLS}); null leaves
 * UCX's own choice (or its environment variable) in force. On Soft-RoCE: {@link #softRoce()}.
 */
public final class NodeConfig
{
    /** The Soft-RoCE device of the testbed, port 1. */
    public static final String RXE_DEVICE = "rxe0:1";

    /**
     * RC over verbs: UCX connects it through rdmacm from a listener; needs no UD transport beside it.
     */
    public static final String RC_VERBS = "rc_verbs";

    private final String netDevices;
    private final String transports;
    private final Boolean memoryEvents;
    private final ArenaConfig arena;
    private final PinBudget budget;

    private NodeConfig(
        final String netDevices,
        final String transports,
        final Boolean memoryEvents,
        final ArenaConfig arena,
        final PinBudget budget)
    {
        this.netDevices = netDevices;
        this.transports = transports;
        this.memoryEvents = memoryEvents;
        this.arena = Objects.requireNonNull(arena, "arena");
        this.budget = Objects.requireNonNull(budget, "budget");
    }

    /**
     * @return UCX's defaults, the arena's defaults, no pin cap beyond what the kernel enforces.
     */
    public static NodeConfig defaults()
    {
        return new NodeConfig(null, null, null, ArenaConfig.defaults(), new PinBudget(PinBudget.UNLIMITED));
    }

    /**
     * @return {@link #defaults()} on {@link #RXE_DEVICE} with {@link #RC_VERBS}.
     */
    public static NodeConfig softRoce()
    {
        return defaults().withNetDevices(RXE_DEVICE).withTransports(RC_VERBS);
    }

    /**
     * @param netDevices UCX device list such as {@code rxe0:1}, or null for UCX's choice.
     * @return a copy.
     */
    public NodeConfig withNetDevices(final String netDevices)
    {
        return new NodeConfig(netDevices, transports, memoryEvents, arena, budget);
    }

    /**
     * @param transports UCX transport list such as {@code rc_verbs} or {@code tcp}, or null for UCX's choice.
     * @return a copy.
     */
    public NodeConfig withTransports(final String transports)
    {
        return new NodeConfig(netDevices, transports, memoryEvents, arena, budget);
    }

    /**
     * Whether UCX installs its memory hooks ({@code UCX_MEM_EVENTS}). Arena memory never needs them: it is
     * mapped once and never unmapped while mapped in UCX. Turning them off also blinds UCX's registration cache
     * to munmap of any other memory the process sends from, so only turn them off when every buffer handed to
     * UCX comes from the arena.
     *
     * @param enabled false to tell UCX not to watch memory events.
     * @return a copy.
     */
    public NodeConfig withMemoryEvents(final boolean enabled)
    {
        return new NodeConfig(netDevices, transports, enabled, arena, budget);
    }

    /**
     * @param arena the arena's settings.
     * @return a copy.
     */
    public NodeConfig withArena(final ArenaConfig arena)
    {
        return new NodeConfig(netDevices, transports, memoryEvents, arena, budget);
    }

    /**
     * @return the UCX device list, or null.
     */
    public String netDevices()
    {
        return netDevices;
    }

    /**
     * @return the UCX transport list, or null.
     */
    public String transports()
    {
        return transports;
    }

    /**
     * @return the memory-events setting, or null for UCX's default (on).
     */
    public Boolean memoryEvents()
    {
        return memoryEvents;
    }

    /**
     * @return the arena's settings.
     */
    public ArenaConfig arena()
    {
        return arena;
    }

    /**
     * @return the cap on bytes the node's registrar maps.
     */
    public PinBudget budget()
    {
        return budget;
    }

    public String toString()
    {
        return "NodeConfig{netDevices=" + netDevices + ", transports=" + transports + ", memoryEvents=" +
            memoryEvents + ", arena=" + arena + "}";
    }
}
