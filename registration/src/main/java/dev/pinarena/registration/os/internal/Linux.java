package dev.pinarena.registration.os.internal;

import jnr.ffi.LibraryLoader;

/**
 * The one place that loads libc and names the Linux constants the registration layer uses. Values are the
 * x86-64 / generic ones from the kernel's uapi headers.
 */
public final class Linux
{
    /** Pages may be read. */
    public static final int PROT_READ = 0x1;
    /** Pages may be written. */
    public static final int PROT_WRITE = 0x2;
    /** Pages may not be accessed. */
    public static final int PROT_NONE = 0x0;

    /** Private copy-on-write mapping. */
    public static final int MAP_PRIVATE = 0x02;
    /** Place the mapping exactly at the given address, replacing whatever is mapped there. */
    public static final int MAP_FIXED = 0x10;
    /** Place the mapping exactly at the given address, or fail with EEXIST if anything is mapped there (4.17+). */
    public static final int MAP_FIXED_NOREPLACE = 0x100000;
    /** Not backed by a file. */
    public static final int MAP_ANONYMOUS = 0x20;
    /** Do not reserve swap space. */
    public static final int MAP_NORESERVE = 0x4000;
    /** Fault every page in now. */
    public static final int MAP_POPULATE = 0x8000;
    /** Back with hugetlbfs pages; the size is encoded at {@link #MAP_HUGE_SHIFT}. */
    public static final int MAP_HUGETLB = 0x40000;
    /** Bit position of log2(huge page size) in mmap flags. */
    public static final int MAP_HUGE_SHIFT = 26;
    /** mmap's failure value. */
    public static final long MAP_FAILED = -1L;

    /** Do not copy the range into a child at fork. */
    public static final int MADV_DONTFORK = 10;
    /** Undo MADV_DONTFORK. */
    public static final int MADV_DOFORK = 11;
    /** Ask for transparent huge pages. */
    public static final int MADV_HUGEPAGE = 14;
    /** Refuse transparent huge pages. */
    public static final int MADV_NOHUGEPAGE = 15;
    /** Fault the range in writable (Linux 5.14+). */
    public static final int MADV_POPULATE_WRITE = 23;

    /** getrlimit resource for locked (and pinned) memory. */
    public static final int RLIMIT_MEMLOCK = 8;
    /** The "no limit" value of an rlimit. */
    public static final long RLIM_INFINITY = -1L;

    /** open(2) read-only. */
    public static final int O_RDONLY = 0;
    /** open(2) read-write. */
    public static final int O_RDWR = 2;
    /** open(2) create. */
    public static final int O_CREAT = 0100;
    /** open(2) truncate. */
    public static final int O_TRUNC = 01000;
    /** open(2) close on exec. */
    public static final int O_CLOEXEC = 02000000;

    /** x86-64 system call number of mmap. */
    public static final int SYS_MMAP = 9;
    /** x86-64 system call number of io_uring_setup. */
    public static final int SYS_IO_URING_SETUP = 425;
    /** x86-64 system call number of io_uring_enter. */
    public static final int SYS_IO_URING_ENTER = 426;
    /** x86-64 system call number of io_uring_register. */
    public static final int SYS_IO_URING_REGISTER = 427;

    /** The base page size of the platforms this project runs on. */
    public static final long BASE_PAGE_SIZE = 4096;

    private static final LibC LIBC = LibraryLoader.create(LibC.class).load("c");
    private static final jnr.ffi.Runtime RUNTIME = jnr.ffi.Runtime.getRuntime(LIBC);

    private Linux()
    {
    }

    /**
     * @return the libc binding.
     */
    public static LibC libc()
    {
        return LIBC;
    }

    /**
     * mmap(2) as a raw system call. (Bound as a libc function through jnr-ffi 2.2.17, mmap returned EINVAL for
     * every argument set tried here, while the raw system call with the same arguments works.)
     *
     * @return the mapping's address, or {@link #MAP_FAILED} with errno set.
     */
    public static long mmap(
        final long address, final long length, final int prot, final int flags, final int fd, final long offset)
    {
        return LIBC.syscall(SYS_MMAP, address, length, prot, flags, fd, offset);
    }

    /**
     * @return errno saved by the last {@link jnr.ffi.annotations.SaveError} call on this thread.
     */
    public static int errno()
    {
        return RUNTIME.getLastError();
    }
}
