package dev.pinarena.registration.os.internal;

import jnr.ffi.annotations.SaveError;

/**
 * The libc entry points the registration layer calls, bound with jnr-ffi. Pointers travel as {@code long}
 * addresses (x86-64 and arm64 LP64). Every call that can fail saves errno; read it with
 * {@link Linux#errno()} straight after the call, on the same thread.
 */
public interface LibC
{
    /**
     * @return 0 or -1.
     */
    @SaveError
    int munmap(long address, long length);

    /**
     * @return 0 or -1.
     */
    @SaveError
    int madvise(long address, long length, int advice);

    /**
     * @return 0 or -1.
     */
    @SaveError
    int mlock(long address, long length);

    /**
     * @return 0 or -1.
     */
    @SaveError
    int munlock(long address, long length);

    /**
     * @param resource e.g. RLIMIT_MEMLOCK.
     * @param rlimit   address of a 16-byte {@code struct rlimit}.
     * @return 0 or -1.
     */
    @SaveError
    int getrlimit(int resource, long rlimit);

    /**
     * @param resource e.g. RLIMIT_MEMLOCK.
     * @param rlimit   address of a 16-byte {@code struct rlimit}.
     * @return 0 or -1.
     */
    @SaveError
    int setrlimit(int resource, long rlimit);

    /**
     * Raw system call with up to six arguments; unused ones are ignored by the kernel.
     *
     * @return the result, or -1 with errno set.
     */
    @SaveError
    long syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6);

    /**
     * @return 0 or -1.
     */
    @SaveError
    int close(int fd);

    /**
     * @return a file descriptor or -1.
     */
    @SaveError
    int open(String path, int flags, int mode);

    /**
     * @return bytes read or -1.
     */
    @SaveError
    long pread(int fd, long buffer, long count, long offset);

    /**
     * @return bytes written or -1.
     */
    @SaveError
    long pwrite(int fd, long buffer, long count, long offset);

    /**
     * glibc's malloc: used only to show what memory from a returning allocator does.
     *
     * @return address or 0.
     */
    @SaveError
    long malloc(long size);

    /**
     * glibc's free.
     */
    void free(long address);

    /**
     * glibc's mallopt.
     *
     * @return 1 on success.
     */
    int mallopt(int param, int value);
}
