package dev.pinarena.registration.os;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What kind of pages back a chunk, in the order a chunk mapper prefers them by default.
 */
public enum PageBacking
{
    /** hugetlbfs 1 GiB pages (MAP_HUGETLB | MAP_HUGE_1GB), reserved by the administrator. */
    HUGETLB_1G("hugetlb-1g", 1L << 30),
    /** hugetlbfs 2 MiB pages (MAP_HUGETLB | MAP_HUGE_2MB), reserved by the administrator. */
    HUGETLB_2M("hugetlb-2m", 2L << 20),
    /** Transparent huge pages: an aligned anonymous mapping with MADV_HUGEPAGE; the kernel may or may not oblige. */
    THP("thp", 2L << 20),
    /** Ordinary 4 KiB pages (MADV_NOHUGEPAGE so they stay that size). */
    SMALL("4k", 4096);

    /** The default order of preference: largest real pages first. */
    public static final List<PageBacking> DEFAULT_PREFERENCE = List.of(HUGETLB_1G, HUGETLB_2M, THP, SMALL);

    private final String label;
    private final long pageSize;

    PageBacking(final String label, final long pageSize)
    {
        this.label = label;
        this.pageSize = pageSize;
    }

    /**
     * @return the name used in configuration, e.g. {@code hugetlb-2m}.
     */
    public String label()
    {
        return label;
    }

    /**
     * @return the page size this backing aims for (for THP: what it gets when the kernel obliges).
     */
    public long pageSize()
    {
        return pageSize;
    }

    /**
     * @return true for the hugetlbfs backings, whose pages come from a reserved pool.
     */
    public boolean isHugetlb()
    {
        return this == HUGETLB_1G || this == HUGETLB_2M;
    }

    /**
     * @param label a configuration label.
     * @return the backing.
     * @throws IllegalArgumentException naming the labels that exist.
     */
    public static PageBacking fromLabel(final String label)
    {
        final String wanted = label.trim().toLowerCase(Locale.ROOT);
        for (final PageBacking backing : values())
        {
            if (backing.label.equals(wanted))
            {
                return backing;
            }
        }
        throw new IllegalArgumentException("unknown page backing '" + label + "': use one of hugetlb-1g, hugetlb-2m, thp, 4k");
    }

    /**
     * @param labels comma-separated labels, e.g. {@code hugetlb-2m,4k}.
     * @return the preference list, in the given order.
     */
    public static List<PageBacking> parseList(final String labels)
    {
        final List<PageBacking> list = new ArrayList<>();
        for (final String part : labels.split(","))
        {
            if (!part.isBlank())
            {
                list.add(fromLabel(part));
            }
        }
        if (list.isEmpty())
        {
            throw new IllegalArgumentException("empty page backing list: '" + labels + "'");
        }
        return List.copyOf(list);
    }
}
