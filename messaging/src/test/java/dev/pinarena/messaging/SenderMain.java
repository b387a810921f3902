package dev.pinarena.messaging;

import java.net.InetSocketAddress;

/**
 * The sending JVM of the Soft-RoCE check: connects to {@link ReceiverMain}, runs a warm-up round and then
 * ROUNDS measured rounds of {@link CheckingSender}, and prints what both sides registered:
 * {@code SENDER DONE key=value ...}. Exits 1 with the failed check's message if any byte differs.
 * Usage: {@code SenderMain HOST PORT ROUNDS}.
 */
public final class SenderMain
{
    private SenderMain()
    {
    }

    /**
     * @param args host, port, rounds after the warm-up.
     * @throws Exception on failure.
     */
    public static void main(final String[] args) throws Exception
    {
        final int rounds = Integer.parseInt(args[2]);
        try (ArenaNode node = ArenaNode.open(NodeConfig.softRoce()))
        {
            final CheckingSender sender = new CheckingSender(node, () -> { });
            sender.connect(new InetSocketAddress(args[0], Integer.parseInt(args[1])));
            sender.round(0);
            final long warmBytes = sender.bytesMoved();
            final long warmMaps = node.registrar().memMapCalls();
            final long warmVerbs = VerbsRegistrationCounter.registrations();
            final long peerWarmMaps = sender.peerMemMapCalls();
            final long peerWarmVerbs = sender.peerVerbsRegistrations();
            for (int round = 1; round <= rounds; round++)
            {
                sender.round(round);
            }
            System.out.println("SENDER DONE" +
                " bytes=" + sender.bytesMoved() + " warmBytes=" + warmBytes +
                " messages=" + 3L * (rounds + 1) * CheckProtocol.SIZES.length +
                " warmMaps=" + warmMaps + " maps=" + node.registrar().memMapCalls() +
                " warmVerbs=" + warmVerbs + " verbs=" + VerbsRegistrationCounter.registrations() +
                " peerWarmMaps=" + peerWarmMaps + " peerMaps=" + sender.peerMemMapCalls() +
                " peerWarmVerbs=" + peerWarmVerbs + " peerVerbs=" + sender.peerVerbsRegistrations());
            System.out.flush();
            sender.bye();
            sender.close();
        }
        catch (final AssertionError failure)
        {
            System.out.println("SENDER FAILED " + failure.getMessage());
            System.out.flush();
            System.exit(1);
        }
    }
}
