package dev.pinarena.registration.verbs;

/**
 * Byte offsets of the rdma-core structures this backend reads, for LP64 Linux (x86-64 and arm64).
 * <p>
 * These mirror {@code /usr/include/infiniband/verbs.h} (rdma-core 44) and were checked with
 * {@code offsetof}/{@code sizeof} from a C program compiled against that header. The structures are part of
 * the libibverbs ABI and have kept these layouts since {@code IBVERBS_1.1}.
 */
final class VerbsLayout
{
    /** {@code struct ibv_mr.context}: {@code struct ibv_context *}. */
    public static final int MR_CONTEXT_OFFSET = 0;
    /** {@code struct ibv_mr.pd}: {@code struct ibv_pd *}. */
    public static final int MR_PD_OFFSET = 8;
    /** {@code struct ibv_mr.addr}: {@code void *}. */
    public static final int MR_ADDR_OFFSET = 16;
    /** {@code struct ibv_mr.length}: {@code size_t}. */
    public static final int MR_LENGTH_OFFSET = 24;
    /** {@code struct ibv_mr.handle}: {@code uint32_t}, the kernel's handle for the MR. */
    public static final int MR_HANDLE_OFFSET = 32;
    /** {@code struct ibv_mr.lkey}: {@code uint32_t}. */
    public static final int MR_LKEY_OFFSET = 36;
    /** {@code struct ibv_mr.rkey}: {@code uint32_t}. */
    public static final int MR_RKEY_OFFSET = 40;
    /** {@code sizeof(struct ibv_mr)}. */
    public static final int MR_SIZE = 48;

    /** {@code struct ibv_port_attr.state}: {@code enum ibv_port_state}. */
    public static final int PORT_ATTR_STATE_OFFSET = 0;
    /** {@code struct ibv_port_attr.active_mtu}: {@code enum ibv_mtu}. */
    public static final int PORT_ATTR_ACTIVE_MTU_OFFSET = 8;
    /** {@code struct ibv_port_attr.link_layer}: {@code uint8_t}. */
    public static final int PORT_ATTR_LINK_LAYER_OFFSET = 46;
    /** {@code sizeof(struct ibv_port_attr)}. */
    public static final int PORT_ATTR_SIZE = 52;

    /** {@code struct ibv_device_attr.fw_ver}: {@code char[64]}. */
    public static final int DEVICE_ATTR_FW_VER_OFFSET = 0;
    /** Length of {@code struct ibv_device_attr.fw_ver}. */
    public static final int DEVICE_ATTR_FW_VER_LENGTH = 64;
    /** {@code struct ibv_device_attr.max_mr_size}: {@code uint64_t}. */
    public static final int DEVICE_ATTR_MAX_MR_SIZE_OFFSET = 80;
    /** {@code struct ibv_device_attr.max_mr}: {@code int}. */
    public static final int DEVICE_ATTR_MAX_MR_OFFSET = 136;
    /** {@code struct ibv_device_attr.phys_port_cnt}: {@code uint8_t}. */
    public static final int DEVICE_ATTR_PHYS_PORT_CNT_OFFSET = 227;
    /** {@code sizeof(struct ibv_device_attr)}. */
    public static final int DEVICE_ATTR_SIZE = 232;

    /** {@code IBV_PORT_ACTIVE} of {@code enum ibv_port_state}. */
    public static final int PORT_STATE_ACTIVE = 4;
    /** {@code IBV_LINK_LAYER_INFINIBAND}. */
    public static final int LINK_LAYER_INFINIBAND = 1;
    /** {@code IBV_LINK_LAYER_ETHERNET} (RoCE, including Soft-RoCE). */
    public static final int LINK_LAYER_ETHERNET = 2;

    private VerbsLayout()
    {
    }

    /**
     * @param state an {@code enum ibv_port_state} value.
     * @return its name without the {@code IBV_PORT_} prefix.
     */
    public static String portStateName(final int state)
    {
        switch (state)
        {
            case 0: return "NOP";
            case 1: return "DOWN";
            case 2: return "INIT";
            case 3: return "ARMED";
            case PORT_STATE_ACTIVE: return "ACTIVE";
            case 5: return "ACTIVE_DEFER";
            default: return "state " + state;
        }
    }

    /**
     * @param mtu an {@code enum ibv_mtu} value ({@code IBV_MTU_256} = 1 ... {@code IBV_MTU_4096} = 5).
     * @return the MTU in bytes, or 0 if unknown.
     */
    public static int mtuBytes(final int mtu)
    {
        return mtu >= 1 && mtu <= 5 ? 128 << mtu : 0;
    }

    /**
     * @param linkLayer an {@code IBV_LINK_LAYER_*} value.
     * @return {@code InfiniBand}, {@code Ethernet} or {@code unspecified}.
     */
    public static String linkLayerName(final int linkLayer)
    {
        switch (linkLayer)
        {
            case LINK_LAYER_INFINIBAND: return "InfiniBand";
            case LINK_LAYER_ETHERNET: return "Ethernet";
            default: return "unspecified";
        }
    }
}
