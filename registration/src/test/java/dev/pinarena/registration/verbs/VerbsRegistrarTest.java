package dev.pinarena.registration.verbs;

import dev.pinarena.registration.AgronaAccess;
import dev.pinarena.registration.Access;
import dev.pinarena.registration.internal.Errno;
import dev.pinarena.registration.PinBudget;
import dev.pinarena.registration.PinLimitExceededException;
import dev.pinarena.registration.Region;
import dev.pinarena.registration.internal.RegisteredRanges;
import dev.pinarena.registration.Registrar;
import dev.pinarena.registration.RegistrarClosedException;
import dev.pinarena.registration.RegistrationException;
import dev.pinarena.registration.UnknownRegionException;
import dev.pinarena.registration.os.ChunkMapper;
import dev.pinarena.registration.os.MappedChunk;
import dev.pinarena.registration.testkit.ChildJvm;
import dev.pinarena.registration.testkit.MemlockChild;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The verbs backend against a real kernel verbs stack. Runs only where RDMA exists, in practice inside
 * {@code testbed/softroce} (Soft-RoCE, {@code rxe0}):
 * {@code testbed/softroce --env PINARENA_REQUIRE_RDMA=1 ... --include-tag softroce}. Elsewhere it is skipped,
 * unless {@code PINARENA_REQUIRE_RDMA=1} makes a missing device a failure.
 */
@Tag("softroce")
final class VerbsRegistrarTest
{
    private static final long KIB = 1024;
    private static final long MIB = 1024 * KIB;
    private static final long[] CHUNK_SIZES = {4 * KIB, 64 * KIB, MIB, 16 * MIB, 64 * MIB};
    private static final int LOCAL_AND_REMOTE = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;

    private static String device;

    private final Map<Long, Long> mappings = new HashMap<>();
    private VerbsRegistrar registrar;

    @BeforeAll
    static void requireRdma()
    {
        device = RdmaDevice.require();
    }

    @BeforeEach
    void open()
    {
        registrar = VerbsRegistrar.open(device, new PinBudget(PinBudget.UNLIMITED));
    }

    @AfterEach
    void closeAndUnmap()
    {
        registrar.close();
        for (final Map.Entry<Long, Long> e : mappings.entrySet())
        {
            TestLibc.unmap(e.getKey(), e.getValue());
        }
        assertEquals(0, RegisteredRanges.count(), "a registration outlived its registrar");
    }

    @Test
    void opensTheDeviceWithAProtectionDomain()
    {
        assertEquals(device, registrar.deviceName());
        assertTrue(VerbsRegistrar.listDevices().contains(device));
        assertNotEquals(0, registrar.protectionDomain());
        assertNotEquals(0, registrar.context());
        assertEquals(VerbsRegistrar.NAME, registrar.name());
        final String description = registrar.description();
        System.out.println("verbs registrar: " + registrar);
        assertTrue(description.startsWith(device), description);
        assertTrue(description.contains("port 1 ACTIVE"), description);
    }

    @Test
    void registersChunksFrom4KiBTo64MiBWithDistinctKeys()
    {
        final long vmPinBefore = TestLibc.procStatusKb("VmPin");
        final List<Region> regions = new ArrayList<>();
        long total = 0;
        for (final long size : CHUNK_SIZES)
        {
            final long address = map(size);
            final Region region = registrar.register(address, size);
            regions.add(region);
            total += size;

            assertSame(registrar, region.owner());
            assertEquals(address, region.address());
            assertEquals(size, region.length());
            assertEquals(Access.LOCAL_WRITE, region.access());
            assertNotEquals(0, region.lkey(), region.toString());
            assertNotEquals(0, region.handle());
            assertEquals(1, region.slots());
        }
        assertDistinct(regions, true, false);
        assertEquals(total, registrar.pinnedBytes());
        assertEquals(CHUNK_SIZES.length, registrar.regionCount());
        assertEquals(CHUNK_SIZES.length, RegisteredRanges.count());
        assertEquals(vmPinBefore + total / KIB, TestLibc.procStatusKb("VmPin"), "the kernel pinned every page once");

        for (final Region region : regions)
        {
            registrar.deregister(region);
        }
        assertEquals(0, registrar.pinnedBytes());
        assertEquals(0, registrar.regionCount());
        assertEquals(vmPinBefore, TestLibc.procStatusKb("VmPin"), "deregistering unpinned every page");
    }

    @Test
    void registersChunkMapperChunksWhichStayMappedWhileRegistered()
    {
        final List<MappedChunk> chunks = List.of(ChunkMapper.map(ChunkMapper.MIN_CHUNK_SIZE), ChunkMapper.map(64 * MIB));
        try
        {
            final List<Region> regions = new ArrayList<>();
            for (final MappedChunk chunk : chunks)
            {
                final Region region = registrar.register(chunk.address(), chunk.size(), LOCAL_AND_REMOTE);
                assertEquals(chunk.address(), region.address());
                assertEquals(chunk.size(), region.length());
                assertNotEquals(0, region.rkey(), region.toString());
                regions.add(region);
                final IllegalStateException refused = assertThrows(IllegalStateException.class, chunk::unmap);
                assertTrue(refused.getMessage().contains("still covers"), refused.getMessage());
                assertFalse(chunk.isUnmapped());
                System.out.println("registered " + chunk + " as " + region);
            }
            assertDistinct(regions, true, true);
            for (final Region region : regions)
            {
                registrar.deregister(region);
            }
        }
        finally
        {
            registrar.close();
            for (final MappedChunk chunk : chunks)
            {
                chunk.unmap();
            }
        }
    }

    @Test
    void registersHugetlbAndSmallPageChunks() throws IOException
    {
        // The guest starts with an empty hugetlb pool: reserve what this test needs, and put it back after.
        final java.nio.file.Path pool = Paths.get("/proc/sys/vm/nr_hugepages");
        final long before = Long.parseLong(java.nio.file.Files.readString(pool).trim());
        java.nio.file.Files.writeString(pool, Long.toString(before + 8));
        final MappedChunk huge = ChunkMapper.map(8 * MIB, List.of(dev.pinarena.registration.os.PageBacking.HUGETLB_2M));
        final MappedChunk small = ChunkMapper.map(8 * MIB, List.of(dev.pinarena.registration.os.PageBacking.SMALL));
        try
        {
            assertEquals(2 * MIB, huge.effectivePageSize(), huge.toString());
            assertEquals(4 * KIB, small.effectivePageSize(), small.toString());
            final Region hugeRegion = registrar.register(huge.address(), huge.size(), LOCAL_AND_REMOTE);
            final Region smallRegion = registrar.register(small.address(), small.size(), LOCAL_AND_REMOTE);
            assertDistinct(List.of(hugeRegion, smallRegion), true, true);
            System.out.println("registered " + huge + " as " + hugeRegion + " and " + small + " as " + smallRegion);
            registrar.deregister(hugeRegion);
            registrar.deregister(smallRegion);
        }
        finally
        {
            huge.unmap();
            small.unmap();
            java.nio.file.Files.writeString(pool, Long.toString(before));
        }
    }

    @Test
    void remoteAccessGivesDistinctNonZeroRkeys()
    {
        final List<Region> regions = new ArrayList<>();
        for (int i = 0; i < 4; i++)
        {
            final Region region = registrar.register(map(64 * KIB), 64 * KIB, LOCAL_AND_REMOTE);
            assertNotEquals(0, region.lkey(), region.toString());
            assertNotEquals(0, region.rkey(), region.toString());
            assertEquals(LOCAL_AND_REMOTE, region.access());
            regions.add(region);
        }
        assertDistinct(regions, true, true);
        final Region readOnlyRemote = registrar.register(map(4 * KIB), 4 * KIB, Access.REMOTE_READ);
        assertNotEquals(0, readOnlyRemote.rkey(), readOnlyRemote.toString());
    }

    @Test
    void sameMemoryTwiceGivesTwoRegions()
    {
        final long address = map(MIB);
        final Region first = registrar.register(address, MIB);
        final Region second = registrar.register(address, MIB, LOCAL_AND_REMOTE);
        assertNotEquals(first.lkey(), second.lkey());
        assertNotEquals(first.handle(), second.handle());
        registrar.deregister(first);
        registrar.deregister(second);
    }

    @Test
    void refusesRemoteWriteWithoutLocalWrite()
    {
        final long address = map(64 * KIB);
        assertThrows(IllegalArgumentException.class, () -> registrar.register(address, 64 * KIB, Access.REMOTE_WRITE));
        assertThrows(IllegalArgumentException.class, () -> registrar.register(address, 64 * KIB, Access.REMOTE_ATOMIC));
        assertEquals(0, registrar.regionCount());
        assertEquals(0, registrar.pinnedBytes());
    }

    @Test
    void doubleDeregisterIsCaughtBeforeTheDevice()
    {
        final Region region = registrar.register(map(64 * KIB), 64 * KIB);
        registrar.deregister(region);
        assertThrows(UnknownRegionException.class, () -> registrar.deregister(region));
        assertEquals(0, registrar.pinnedBytes());
    }

    @Test
    void unmappedRangeNamesIbvRegMr()
    {
        // Ranges nothing maps: below vm.mmap_min_addr, and the first page past the 47-bit user address space
        // (the kernel maps above it only on explicit request). A range munmapped by the test itself is not
        // used: the JVM may map something into the hole before ibv_reg_mr runs.
        assertUnmappedRangeRefused(Registrar.PAGE_SIZE, 8 * Registrar.PAGE_SIZE);
        assertUnmappedRangeRefused(1L << 47, 2 * MIB);
    }

    private void assertUnmappedRangeRefused(final long address, final long length)
    {
        final long vmPinBefore = TestLibc.procStatusKb("VmPin");
        final RegistrationException ex = assertThrows(
            RegistrationException.class, () -> registrar.register(address, length));
        System.out.println("unmapped range: " + ex.getMessage());
        assertEquals("ibv_reg_mr", ex.call());
        assertTrue(ex.errno() == Errno.EFAULT || ex.errno() == Errno.EINVAL, ex.getMessage());
        assertTrue(ex.getMessage().contains("not mapped"), ex.getMessage());
        assertTrue(ex.getMessage().contains(Long.toHexString(address)), ex.getMessage());
        assertEquals(0, registrar.pinnedBytes());
        assertEquals(0, registrar.regionCount());
        assertEquals(vmPinBefore, TestLibc.procStatusKb("VmPin"));
    }

    @Test
    void budgetIsEnforcedBeforeTheDevice()
    {
        try (VerbsRegistrar small = VerbsRegistrar.open(device, new PinBudget(MIB)))
        {
            final Region region = small.register(map(MIB), MIB);
            assertThrows(PinLimitExceededException.class, () -> small.register(map(4 * KIB), 4 * KIB));
            small.deregister(region);
            small.deregister(small.register(map(MIB), MIB));
        }
    }

    @Test
    void useAfterCloseIsRefused()
    {
        final long vmPinBefore = TestLibc.procStatusKb("VmPin");
        final Region live = registrar.register(map(MIB), MIB);
        registrar.close();
        assertTrue(registrar.isClosed());
        assertEquals(0, registrar.pinnedBytes(), "close deregistered the live region");
        assertEquals(vmPinBefore, TestLibc.procStatusKb("VmPin"));
        assertThrows(RegistrarClosedException.class, () -> registrar.register(map(4 * KIB), 4 * KIB));
        assertThrows(RegistrarClosedException.class, () -> registrar.deregister(live));
        assertTrue(registrar.description().contains("closed"), registrar.description());
        registrar.close();
    }

    @Test
    void unknownDeviceNameListsTheDevicesThatExist()
    {
        final RegistrationException ex = assertThrows(
            RegistrationException.class,
            () -> VerbsRegistrar.open("no_such_dev9", new PinBudget(PinBudget.UNLIMITED)));
        assertEquals(Errno.ENODEV, ex.errno());
        assertTrue(ex.getMessage().contains("no_such_dev9"), ex.getMessage());
        for (final String name : VerbsRegistrar.listDevices())
        {
            assertTrue(ex.getMessage().contains(name), ex.getMessage());
        }
    }

    @Test
    void registrationBeyondRlimitMemlockFailsWithTheFixAndLeaksNothing() throws Exception
    {
        final long limit = MIB;
        final long piece = 256 * KIB;
        final ChildJvm child = MemlockChild.run(MemlockChild.Kind.VERBS, limit, piece);
        System.out.println("memlock child:\n" + child);

        assertEquals("false", child.get("cap_ipc_lock"), "the child still had CAP_IPC_LOCK");
        assertEquals(Long.toString(limit), child.get("limit"));
        final String failure = child.get("message");
        assertEquals("ibv_reg_mr", child.get("call"));
        assertTrue(failure.contains("ibv_reg_mr"), failure);
        assertTrue(failure.contains("ENOMEM") || failure.contains("EPERM"), failure);
        assertTrue(failure.contains("ulimit -l"), failure);

        final long refusedAfter = Long.parseLong(child.get("refused_after"));
        assertTrue(refusedAfter >= piece && refusedAfter <= limit, "registered " + refusedAfter + " B: " + child);
        assertEquals(refusedAfter, Long.parseLong(child.get("vmpin_at_failure")) -
            Long.parseLong(child.get("vmpin_start")), "the failed registration left pages pinned");
        assertEquals("0", child.get("pinned_after"));
        assertEquals("0", child.get("regions_after"));
        assertEquals(child.get("vmpin_start"), child.get("vmpin_after"), "pages stayed pinned");
        assertEquals("true", child.get("done"));
    }

    private long map(final long length)
    {
        final long address = TestLibc.map(length);
        mappings.put(address, length);
        return address;
    }

    private static void assertDistinct(final List<Region> regions, final boolean lkeys, final boolean rkeys)
    {
        final Set<Integer> seenL = new HashSet<>();
        final Set<Integer> seenR = new HashSet<>();
        final Set<Long> seenHandles = new HashSet<>();
        for (final Region region : regions)
        {
            assertTrue(seenHandles.add(region.handle()), "handle reused: " + regions);
            if (lkeys)
            {
                assertTrue(seenL.add(region.lkey()), "lkey reused: " + regions);
            }
            if (rkeys)
            {
                assertTrue(seenR.add(region.rkey()), "rkey reused: " + regions);
            }
        }
        assertFalse(regions.isEmpty());
    }
}
