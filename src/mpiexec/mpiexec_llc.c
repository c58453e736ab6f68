/* mpiexec.llc - the mpiexec and mpirun of mpich-llc: refuse programs built
 * for another MPI's ABI, then hand everything to hydra (mpiexec.hydra).
 *
 * A program linked against Open MPI (DT_NEEDED libmpi.so.40, or another
 * libmpi.so.N that is not MPICH's 12) does not use hydra's PMI: started by
 * hydra, every process initialises as an Open MPI singleton and the job
 * "succeeds" as N one-process jobs.  So before hydra starts anything, every
 * argument that does not start with "-" is looked up like the shell looks
 * up a command (a name without "/" through PATH); each one that is an
 * executable ELF file has its dynamic section read.  (Only the programs of
 * the MPMD segments matter, but finding them would mean knowing which of
 * hydra's many options take a value; option values and program arguments
 * are rarely executables, and never ones linked against an MPI.)  A foreign
 * libmpi stops the launch with a message that says what to do.
 *
 * Anything this check cannot read (not ELF, no dynamic section, a script,
 * an unreadable file) is left to hydra: the check only ever refuses what it
 * has positively identified.  mpiexec.hydra, started directly, skips it. */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MPICH_ABI_SONAME "libmpi.so.12"

static int is_executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The file a command name names, as execvp would find it; 0 if none. */
static int resolve_command(const char *name, char *out, size_t outlen)
{
    if (strchr(name, '/')) {
        if (!is_executable_file(name) || strlen(name) >= outlen)
            return 0;
        strcpy(out, name);
        return 1;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        return 0;
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t dirlen = colon ? (size_t) (colon - path) : strlen(path);
        int n = snprintf(out, outlen, "%.*s%s%s", (int) dirlen, path, dirlen ? "/" : "", name);
        if (n > 0 && (size_t) n < outlen && is_executable_file(out))
            return 1;
        if (!colon)
            break;
        path = colon + 1;
    }
    return 0;
}

static int read_at(FILE *f, long off, void *buf, size_t len)
{
    return fseek(f, off, SEEK_SET) == 0 && fread(buf, 1, len, f) == len;
}

/* Calls found(name) for each DT_NEEDED of a 64-bit little-endian ELF file
 * (the platforms mpich-llc builds on); stops early when found returns
 * nonzero and returns that value.  0 when the file is not such an ELF file
 * or has no dynamic section. */
static int for_each_needed(const char *path, int (*found)(const char *name, void *arg), void *arg)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int result = 0;
    Elf64_Ehdr eh;
    if (!read_at(f, 0, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 4096)
        goto out;
    for (unsigned i = 0; i < eh.e_shnum && !result; i++) {
        Elf64_Shdr dyn, str;
        if (!read_at(f, (long) (eh.e_shoff + (Elf64_Off) i * sizeof(Elf64_Shdr)), &dyn, sizeof(dyn)))
            goto out;
        if (dyn.sh_type != SHT_DYNAMIC || dyn.sh_link >= eh.e_shnum)
            continue;
        if (!read_at(f, (long) (eh.e_shoff + (Elf64_Off) dyn.sh_link * sizeof(Elf64_Shdr)), &str, sizeof(str)) ||
            str.sh_size == 0 || str.sh_size > (64u << 20) || dyn.sh_size > (64u << 20))
            goto out;
        char *strtab = malloc(str.sh_size + 1);
        Elf64_Dyn *ents = malloc(dyn.sh_size ? dyn.sh_size : 1);
        if (strtab && ents && read_at(f, (long) str.sh_offset, strtab, str.sh_size) &&
            read_at(f, (long) dyn.sh_offset, ents, dyn.sh_size)) {
            strtab[str.sh_size] = '\0';
            for (size_t k = 0; k < dyn.sh_size / sizeof(Elf64_Dyn) && ents[k].d_tag != DT_NULL && !result; k++)
                if (ents[k].d_tag == DT_NEEDED && ents[k].d_un.d_val < str.sh_size)
                    result = found(strtab + ents[k].d_un.d_val, arg);
        }
        free(strtab);
        free(ents);
    }
out:
    fclose(f);
    return result;
}

struct foreign {
    char lib[256];
};

/* libmpi.so.N with N other than MPICH's ABI version: another MPI. */
static int note_foreign_libmpi(const char *name, void *arg)
{
    struct foreign *fr = arg;
    if (strncmp(name, "libmpi.so.", 10) != 0 || strcmp(name, MPICH_ABI_SONAME) == 0)
        return 0;
    snprintf(fr->lib, sizeof(fr->lib), "%s", name);
    return 1;
}

static void refuse(const char *prog, const char *path, const char *lib)
{
    int same = strcmp(prog, path) == 0;
    fprintf(stderr,
            "mpiexec: %s%s%s%s is linked against %s, the library of another MPI "
            "(libmpi.so.40 is Open MPI's); it cannot run with mpich-llc, whose programs "
            "use MPICH's ABI (%s, libmpich.so.12).\n"
            "mpiexec: rebuild it with this installation's mpicc / mpicxx / mpifort "
            "(module load mpich-llc), or start it with its own MPI's launcher "
            "(Open MPI: mpirun.openmpi).\n",
            prog, same ? "" : " (", same ? "" : path, same ? "" : ")", lib, MPICH_ABI_SONAME);
}

/* The directory this program was started from (for mpiexec.hydra beside it). */
static int own_dir(char *out, size_t outlen)
{
    ssize_t n = readlink("/proc/self/exe", out, outlen - 1);
    if (n <= 0)
        return 0;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return 1;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char path[PATH_MAX];
        if (argv[i][0] == '-' || !resolve_command(argv[i], path, sizeof(path)))
            continue;
        struct foreign fr = {{0}};
        if (for_each_needed(path, note_foreign_libmpi, &fr)) {
            refuse(argv[i], path, fr.lib);
            return 2;
        }
    }

    char dir[PATH_MAX], hydra[PATH_MAX + 32];
    if (!own_dir(dir, sizeof(dir))) {
        fprintf(stderr, "mpiexec: cannot find my own directory (/proc/self/exe: %s); "
                        "start mpiexec.hydra of this installation instead\n", strerror(errno));
        return 2;
    }
    snprintf(hydra, sizeof(hydra), "%s/mpiexec.hydra", dir);
    argv[0] = hydra;
    execv(hydra, argv);
    fprintf(stderr, "mpiexec: cannot start %s: %s (is the installation complete? make install puts it there)\n",
            hydra, strerror(errno));
    return 127;
}
