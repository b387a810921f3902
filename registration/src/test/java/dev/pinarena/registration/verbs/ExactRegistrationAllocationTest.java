package dev.pinarena.registration.verbs;

import dev.pinarena.registration.testkit.ChildJvm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * The per-buffer key path ({@link VerbsRegistrar#registerExact}, {@link VerbsRegistrar#exactRkey},
 * {@link VerbsRegistrar#deregisterExact}) allocates no Java heap once compiled: every pointer crosses into
 * libibverbs as a raw address and the keys are read straight from the {@code struct ibv_mr}. The cycles run
 * in a child JVM with escape analysis off ({@link ExactKeyCycles}): in this JVM the compiler may remove a
 * per-call object that never leaves the loop, and the count would pass whatever the path allocates. Runs
 * where verbs exist (the VM stage).
 */
@Tag("softroce")
final class ExactRegistrationAllocationTest
{
    @Test
    void registerTakeKeyAndDeregisterAllocateNothing() throws Exception
    {
        final String device = RdmaDevice.require();
        final ChildJvm child = ChildJvm.run(List.of(), List.of("-XX:-DoEscapeAnalysis"), ExactKeyCycles.class, device);
        assertNotEquals("0", child.get("keys"), "keys were read: " + child);
        final long allocated = Long.parseLong(child.get("allocated"));
        final long cycles = Long.parseLong(child.get("cycles"));
        assertEquals(0.0, (double)allocated / cycles, 0.5,
            allocated + " B allocated over " + cycles + " register/rkey/lkey/deregister cycles (" +
            (double)allocated / cycles + " B/op, escape analysis off)");
    }
}
