package dev.pinarena.registration.verbs;

import dev.pinarena.registration.verbs.internal.LibIbverbs;

import dev.pinarena.registration.Access;
import dev.pinarena.registration.internal.Errno;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.RegistrationException;
import org.agrona.UnsafeApi;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import static dev.pinarena.registration.verbs.VerbsLayout.DEVICE_ATTR_FW_VER_LENGTH;
import static dev.pinarena.registration.verbs.VerbsLayout.DEVICE_ATTR_FW_VER_OFFSET;
import static dev.pinarena.registration.verbs.VerbsLayout.DEVICE_ATTR_PHYS_PORT_CNT_OFFSET;
import static dev.pinarena.registration.verbs.VerbsLayout.DEVICE_ATTR_SIZE;
import static dev.pinarena.registration.verbs.VerbsLayout.MR_ADDR_OFFSET;
import static dev.pinarena.registration.verbs.VerbsLayout.MR_CONTEXT_OFFSET;
import static dev.pinarena.registration.verbs.VerbsLayout.MR_LENGTH_OFFSET;
import static dev.pinarena.registration.verbs.VerbsLayout.MR_LKEY_OFFSET;
import static dev.pinarena.registration.verbs.VerbsLayout.MR_PD_OFFSET;
import static dev.pinarena.registration.verbs.VerbsLayout.MR_RKEY_OFFSET;
import static dev.pinarena.registration.verbs.VerbsLayout.PORT_ATTR_ACTIVE_MTU_OFFSET;
import static dev.pinarena.registration.verbs.VerbsLayout.PORT_ATTR_LINK_LAYER_OFFSET;
import static dev.pinarena.registration.verbs.VerbsLayout.PORT_ATTR_SIZE;
import static dev.pinarena.registration.verbs.VerbsLayout.PORT_ATTR_STATE_OFFSET;

/**
 * Registers memory with an RDMA device through libibverbs: one device context and one protection domain per
 * registrar, one {@code ibv_reg_mr} per region.
 * <p>
 * A {@link Region} from this registrar carries the memory region's {@code lkey} and {@code rkey} and, as its
 * handle, the {@code struct ibv_mr *}. The {@link #protectionDomain()} is exposed so queue pairs that use
 * these regions can be created on the same protection domain.
 * <p>
 * Access bits are passed to the device unchanged ({@link Access} mirrors {@code ibv_access_flags}); only
 * {@link Access#LOCAL_WRITE} is granted unless a remote right is asked for.
 */
public final class VerbsRegistrar extends Registrar
{
    /** Backend name. */
    public static final String NAME = "verbs";

    /** Fix when the kernel has no verbs support at all ({@code ibv_get_device_list} fails with ENOSYS). */
    public static final String NO_KERNEL_RDMA_HINT =
        "this kernel has no RDMA support (no ib_uverbs): use a kernel with RDMA, or the io_uring backend";

    /** Fix when the kernel supports verbs but has no device. */
    public static final String NO_DEVICE_HINT =
        "no RDMA device: load a provider (rdma_rxe: rdma link add rxe0 type rxe netdev eth0)";

    /** Fix when a registration passes the locked-memory limit. */
    public static final String MEMLOCK_HINT = "raise ulimit -l or grant CAP_IPC_LOCK";

    /** Port numbers start at 1. */
    private static final int FIRST_PORT = 1;

    private final LibIbverbs lib;
    private final Runtime runtime;
    private final String deviceName;
    private final Pointer context;
    private final Pointer pd;
    private final long pdAddress;
    private boolean released;

    private VerbsRegistrar(
        final LibIbverbs lib, final String deviceName, final Pointer context, final Pointer pd, final PinBudget budget)
    {
        super(NAME, budget);
        this.lib = lib;
        this.runtime = Runtime.getRuntime(lib);
        this.deviceName = deviceName;
        this.context = context;
        this.pd = pd;
        this.pdAddress = pd.address();
    }

    /**
     * Opens a device and allocates a protection domain on it.
     *
     * @param deviceNameOrNull kernel device name such as {@code rxe0} or {@code mlx5_0}, or null for the first.
     * @param budget           cap on the bytes this registrar pins.
     * @return the registrar; close it to release the device.
     * @throws RegistrationException when libibverbs is missing, there is no (such) device, or opening fails;
     *                               the message names the call, the errno and the fix.
     */
    public static VerbsRegistrar open(final String deviceNameOrNull, final PinBudget budget)
    {
        Objects.requireNonNull(budget, "budget");
        final LibIbverbs lib = IbverbsLibrary.lib();
        final Runtime runtime = Runtime.getRuntime(lib);

        final int[] count = new int[1];
        final Pointer list = lib.ibv_get_device_list(count);
        if (list == null)
        {
            throw deviceListFailure(runtime.getLastError());
        }

        final String chosenName;
        final Pointer context;
        try
        {
            final List<String> names = new ArrayList<>(count[0]);
            Pointer chosen = null;
            String name = null;
            for (int i = 0; i < count[0]; i++)
            {
                final Pointer device = list.getPointer((long)i * runtime.addressSize());
                if (device == null)
                {
                    break;
                }
                final String deviceName = lib.ibv_get_device_name(device);
                names.add(deviceName);
                if (chosen == null && (deviceNameOrNull == null || deviceNameOrNull.equals(deviceName)))
                {
                    chosen = device;
                    name = deviceName;
                }
            }
            if (names.isEmpty())
            {
                throw new RegistrationException("ibv_get_device_list", Errno.ENODEV, NO_DEVICE_HINT);
            }
            if (chosen == null)
            {
                throw new RegistrationException(
                    "ibv_open_device(" + deviceNameOrNull + ")",
                    Errno.ENODEV,
                    "there is no RDMA device named '" + deviceNameOrNull + "'; devices present: " +
                    String.join(", ", names));
            }

            context = lib.ibv_open_device(chosen);
            if (context == null)
            {
                final int errno = runtime.getLastError();
                throw new RegistrationException("ibv_open_device(" + name + ")", errno, openDeviceHint(errno));
            }
            chosenName = name;
        }
        finally
        {
            // Pointers to opened devices stay valid after the list is freed; the rest do not matter.
            lib.ibv_free_device_list(list);
        }

        final Pointer pd = lib.ibv_alloc_pd(context);
        if (pd == null)
        {
            final int errno = runtime.getLastError();
            lib.ibv_close_device(context);
            throw new RegistrationException(
                "ibv_alloc_pd(" + chosenName + ")",
                errno,
                errno == Errno.ENOMEM ? "the device has no protection domains or memory left" : null);
        }

        return new VerbsRegistrar(lib, chosenName, context, pd, budget);
    }

    /**
     * @return the names of the RDMA devices libibverbs sees, in its order; never empty.
     * @throws RegistrationException saying why there are none: libibverbs missing, no kernel support, or no
     *                               device.
     */
    public static List<String> listDevices()
    {
        final LibIbverbs lib = IbverbsLibrary.lib();
        final Runtime runtime = Runtime.getRuntime(lib);
        final int[] count = new int[1];
        final Pointer list = lib.ibv_get_device_list(count);
        if (list == null)
        {
            throw deviceListFailure(runtime.getLastError());
        }
        final List<String> names = new ArrayList<>(count[0]);
        try
        {
            for (int i = 0; i < count[0]; i++)
            {
                final Pointer device = list.getPointer((long)i * runtime.addressSize());
                if (device == null)
                {
                    break;
                }
                names.add(lib.ibv_get_device_name(device));
            }
        }
        finally
        {
            lib.ibv_free_device_list(list);
        }
        if (names.isEmpty())
        {
            throw new RegistrationException("ibv_get_device_list", Errno.ENODEV, NO_DEVICE_HINT);
        }
        return Collections.unmodifiableList(names);
    }

    /**
     * @return the kernel name of the open device, e.g. {@code rxe0}.
     */
    public String deviceName()
    {
        return deviceName;
    }

    /**
     * @return the {@code struct ibv_pd *} regions are registered on, for creating queue pairs on the same
     * protection domain. Valid until {@link #close()}.
     */
    public long protectionDomain()
    {
        return pd.address();
    }

    /**
     * @return the {@code struct ibv_context *} of the open device, for creating completion queues and queue
     * pairs. Valid until {@link #close()}.
     */
    public long context()
    {
        return context.address();
    }

    /**
     * @return the device, its firmware and the state of each port, e.g.
     * {@code rxe0 fw 0.0.0, port 1 ACTIVE Ethernet MTU 1024}.
     */
    public synchronized String description()
    {
        if (released)
        {
            return deviceName + " (closed)";
        }
        final StringBuilder sb = new StringBuilder(deviceName);
        final Pointer deviceAttr = Memory.allocateDirect(runtime, DEVICE_ATTR_SIZE, true);
        final int rc = lib.ibv_query_device(context, deviceAttr);
        if (rc != 0)
        {
            return sb.append(", ibv_query_device failed: ").append(Errno.describe(rc)).toString();
        }
        final String firmware = deviceAttr.getString(
            DEVICE_ATTR_FW_VER_OFFSET, DEVICE_ATTR_FW_VER_LENGTH, StandardCharsets.US_ASCII);
        if (!firmware.isEmpty())
        {
            sb.append(" fw ").append(firmware);
        }
        final int ports = deviceAttr.getByte(DEVICE_ATTR_PHYS_PORT_CNT_OFFSET) & 0xFF;
        final Pointer portAttr = Memory.allocateDirect(runtime, PORT_ATTR_SIZE, true);
        for (int port = FIRST_PORT; port < FIRST_PORT + ports; port++)
        {
            sb.append(", port ").append(port);
            final int portRc = lib.ibv_query_port(context, (byte)port, portAttr);
            if (portRc != 0)
            {
                sb.append(" ibv_query_port failed: ").append(Errno.describe(portRc));
                continue;
            }
            sb.append(' ').append(VerbsLayout.portStateName(portAttr.getInt(PORT_ATTR_STATE_OFFSET)))
                .append(' ').append(VerbsLayout.linkLayerName(portAttr.getByte(PORT_ATTR_LINK_LAYER_OFFSET) & 0xFF))
                .append(" MTU ").append(VerbsLayout.mtuBytes(portAttr.getInt(PORT_ATTR_ACTIVE_MTU_OFFSET)));
        }
        return sb.toString();
    }

    /**
     * {@inheritDoc}
     */
    protected Region pin(final long address, final long length, final int access)
    {
        final long mr = lib.ibv_reg_mr(pdAddress, address, length, access);
        if (mr == 0)
        {
            final int errno = runtime.getLastError();
            throw new RegistrationException("ibv_reg_mr", errno, regMrHint(errno, address, length, access));
        }

        final long mrContext = UnsafeApi.getLong(mr + MR_CONTEXT_OFFSET);
        final long mrPd = UnsafeApi.getLong(mr + MR_PD_OFFSET);
        final long mrAddress = UnsafeApi.getLong(mr + MR_ADDR_OFFSET);
        final long mrLength = UnsafeApi.getLong(mr + MR_LENGTH_OFFSET);
        if (mrContext != context.address() || mrPd != pd.address() || mrAddress != address || mrLength != length)
        {
            // The struct does not read back what was registered: the offsets do not match this libibverbs.
            lib.ibv_dereg_mr(mr);
            throw new IllegalStateException(
                "struct ibv_mr layout mismatch: read context=0x" + Long.toHexString(mrContext) +
                " pd=0x" + Long.toHexString(mrPd) + " addr=0x" + Long.toHexString(mrAddress) +
                " length=" + mrLength + ", expected context=0x" + Long.toHexString(context.address()) +
                " pd=0x" + Long.toHexString(pd.address()) + " addr=0x" + Long.toHexString(address) +
                " length=" + length + "; VerbsLayout must mirror verbs.h");
        }

        final int lkey = UnsafeApi.getInt(mr + MR_LKEY_OFFSET);
        final int rkey = UnsafeApi.getInt(mr + MR_RKEY_OFFSET);
        return newRegion(address, length, lkey, rkey, access, mr, 1);
    }

    /**
     * Registers exactly [address, address + length) with {@code access}, byte for byte (no page rounding),
     * outside the regions this registrar tracks: a key for one buffer of memory that is already pinned by a
     * region of this registrar (so the budget is not charged again). For per-buffer remote keys; release it
     * with {@link #deregisterExact(long)} before the region under it is deregistered.
     *
     * @param address first byte, any alignment.
     * @param length  bytes, positive.
     * @param access  {@link Access} bits.
     * @return the {@code struct ibv_mr *}; its keys are {@link #exactRkey(long)} and {@link #exactLkey(long)}.
     * @throws RegistrationException when the device refuses.
     */
    public long registerExact(final long address, final long length, final int access)
    {
        Access.validate(access);
        if (address == 0 || length <= 0 || address + length < address)
        {
            throw new IllegalArgumentException("bad range 0x" + Long.toHexString(address) + "+" + length);
        }
        final long mr = lib.ibv_reg_mr(pdAddress, address, length, access);
        if (mr == 0)
        {
            final int errno = runtime.getLastError();
            throw new RegistrationException("ibv_reg_mr", errno, regMrHint(errno, address, length, access));
        }
        return mr;
    }

    /**
     * @param mr a registration from {@link #registerExact(long, long, int)}.
     * @return its remote key.
     */
    public int exactRkey(final long mr)
    {
        return UnsafeApi.getInt(mr + MR_RKEY_OFFSET);
    }

    /**
     * @param mr a registration from {@link #registerExact(long, long, int)}.
     * @return its local key.
     */
    public int exactLkey(final long mr)
    {
        return UnsafeApi.getInt(mr + MR_LKEY_OFFSET);
    }

    /**
     * Deregisters a registration from {@link #registerExact(long, long, int)}: when this returns, its keys
     * reach nothing.
     *
     * @param mr the {@code struct ibv_mr *}.
     * @throws RegistrationException when the device refuses (the key may still be valid).
     */
    public void deregisterExact(final long mr)
    {
        final int rc = lib.ibv_dereg_mr(mr);
        if (rc != 0)
        {
            throw new RegistrationException("ibv_dereg_mr", rc, null);
        }
    }

    /**
     * {@inheritDoc}
     */
    protected void unpin(final Region region)
    {
        final int rc = lib.ibv_dereg_mr(region.handle());
        if (rc != 0)
        {
            throw new RegistrationException(
                "ibv_dereg_mr",
                rc,
                rc == Errno.EBUSY ? "a memory window is still bound to " + region + ": unbind it first" : null);
        }
    }

    /**
     * {@inheritDoc}
     */
    protected void release()
    {
        released = true;
        final int pdRc = lib.ibv_dealloc_pd(pd);
        lib.ibv_close_device(context);
        if (pdRc != 0)
        {
            throw new RegistrationException(
                "ibv_dealloc_pd(" + deviceName + ")",
                pdRc,
                pdRc == Errno.EBUSY ?
                    "queue pairs or memory windows still use the protection domain: destroy them before close" : null);
        }
    }

    private static RegistrationException deviceListFailure(final int errno)
    {
        final String hint;
        switch (errno)
        {
            case Errno.ENOSYS:
                hint = NO_KERNEL_RDMA_HINT;
                break;
            case Errno.EPERM:
            case Errno.EACCES:
                hint = "cannot read /sys/class/infiniband_verbs: run where sysfs is visible";
                break;
            case Errno.ENOMEM:
                hint = null;
                break;
            default:
                hint = "check that ib_uverbs is loaded (modprobe ib_uverbs) and /sys/class/infiniband_verbs exists";
                break;
        }
        return new RegistrationException("ibv_get_device_list", errno, hint);
    }

    private static String openDeviceHint(final int errno)
    {
        switch (errno)
        {
            case Errno.EPERM:
            case Errno.EACCES:
                return "no permission on /dev/infiniband/uverbs*: run as root or a member of the rdma group";
            case Errno.ENOENT:
            case Errno.ENODEV:
                return "/dev/infiniband/uverbs* is missing: modprobe ib_uverbs (in a container, pass /dev/infiniband in)";
            case Errno.ENOSYS:
            case Errno.EOPNOTSUPP:
                return "no usable provider for the device: apt-get install ibverbs-providers";
            default:
                return null;
        }
    }

    private static String regMrHint(final int errno, final long address, final long length, final int access)
    {
        final String range = "0x" + Long.toHexString(address) + "+" + length;
        switch (errno)
        {
            case Errno.ENOMEM:
            case Errno.EPERM:
                return MEMLOCK_HINT + " (pinning " + range + " passes the locked-memory limit " +
                    memlockLimit() + ", or the device has no memory regions left)";
            case Errno.EFAULT:
                return "the range " + range + " is not mapped (or not accessible) in this process";
            case Errno.EINVAL:
                return "the range " + range + " is not mapped, or the device refuses access " +
                    Access.describe(access);
            case Errno.EOPNOTSUPP:
                return "the device does not support access " + Access.describe(access);
            default:
                return "registering " + range + " with access " + Access.describe(access);
        }
    }

    private static String memlockLimit()
    {
        try
        {
            for (final String line : Files.readAllLines(Paths.get("/proc/self/limits")))
            {
                if (line.startsWith("Max locked memory"))
                {
                    final String[] fields = line.substring("Max locked memory".length()).trim().split("\\s+");
                    return "RLIMIT_MEMLOCK=" + fields[0] + (fields.length > 2 ? " " + fields[2] : "");
                }
            }
        }
        catch (final IOException | RuntimeException ignore)
        {
            // Only decorates a message.
        }
        return "RLIMIT_MEMLOCK";
    }
}
