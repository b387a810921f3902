package dev.pinarena.cli;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import javax.xml.parsers.DocumentBuilderFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The BOM ({@code bom/pom.xml}, {@code pinarena-bom}) users import to align versions: it has the project's
 * version, manages every library module of the reactor at that version and nothing else, and the README's
 * Maven coordinates import it.
 */
class BomTest
{
    /** Reactor modules that are no library a user depends on: the native build, the command, benchmarks. */
    private static final Set<String> NOT_LIBRARIES = Set.of("bindings-c", "cli", "perf", "bom");

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();

    @Test
    void bomHasTheProjectVersionAndEveryLibraryModule() throws Exception
    {
        final Element root = parse(ROOT.resolve("pom.xml"));
        final Element bom = parse(ROOT.resolve("bom/pom.xml"));
        assertEquals("pinarena-bom", child(bom, "artifactId").getTextContent());
        assertEquals(child(root, "groupId").getTextContent(), child(bom, "groupId").getTextContent());
        assertEquals(child(root, "version").getTextContent(), child(bom, "version").getTextContent(),
            "the BOM's version is the project's");
        assertTrue(children(bom, "parent").isEmpty(), "the BOM inherits no build settings");

        final Set<String> libraries = new TreeSet<>();
        for (final Element module : children(child(root, "modules"), "module"))
        {
            final String name = module.getTextContent().trim();
            if (!NOT_LIBRARIES.contains(name))
            {
                libraries.add(child(parse(ROOT.resolve(name).resolve("pom.xml")), "artifactId").getTextContent());
            }
        }
        assertTrue(ROOT.resolve("bom").toFile().isDirectory() &&
            children(child(root, "modules"), "module").stream().anyMatch(m -> m.getTextContent().equals("bom")),
            "bom is a module of the reactor");

        final Set<String> managed = new TreeSet<>();
        for (final Element dep : children(child(child(bom, "dependencyManagement"), "dependencies"), "dependency"))
        {
            assertEquals("dev.pinarena", child(dep, "groupId").getTextContent());
            assertEquals("${project.version}", child(dep, "version").getTextContent(),
                child(dep, "artifactId").getTextContent() + " at the BOM's (the project's) version");
            managed.add(child(dep, "artifactId").getTextContent());
        }
        assertEquals(libraries, managed, "the BOM manages exactly the library modules");
    }

    @Test
    void readmeCoordinatesImportTheBom() throws Exception
    {
        final String readme = Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
        final String compact = readme.replaceAll("\\s+", "");
        assertTrue(compact.contains("<artifactId>pinarena-bom</artifactId>") &&
            compact.contains("<type>pom</type><scope>import</scope>"),
            "README.md's Maven coordinates import pinarena-bom (type pom, scope import)");
    }

    private static Element parse(final Path pom) throws Exception
    {
        final File file = pom.toFile();
        assertTrue(file.isFile(), pom + " exists");
        final Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file);
        return doc.getDocumentElement();
    }

    private static Element child(final Element parent, final String name)
    {
        final List<Element> found = children(parent, name);
        assertEquals(1, found.size(), "one <" + name + "> in <" + parent.getTagName() + ">");
        return found.get(0);
    }

    private static List<Element> children(final Element parent, final String name)
    {
        final List<Element> out = new ArrayList<>();
        final NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++)
        {
            final Node n = nodes.item(i);
            if (n.getNodeType() == Node.ELEMENT_NODE && n.getNodeName().equals(name))
            {
                out.add((Element)n);
            }
        }
        return out;
    }
}
