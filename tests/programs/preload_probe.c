/*
 * preload_probe: reports which processes of a job have libmpiwatch mapped, then exits with a
 * chosen code after MPI_Finalize. The launcher tests use it to check that `mpiwatch run`
 * puts the library into the MPI ranks only (not into mpirun, the shells between the launcher
 * and mpirun, or the launcher itself) and that the application's exit code comes back.
 *
 * Usage: preload_probe [EXIT_CODE [LIBRARY_SUBSTRING]]   (defaults: 3, "libmpiwatch")
 * Prints one line per rank on stdout:
 *   probe rank R self=0|1 ancestors=NAME(PID),...|none
 * where "ancestors" lists every ancestor process (up to pid 1) that has the library mapped.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Returns 1 if /proc/PID/maps mentions needle, 0 if not, -1 if it cannot be read. */
static int maps_has(pid_t pid, const char *needle)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

/* Reads the parent pid and command name of pid from /proc/PID/stat; 0 on success. */
static int proc_parent(pid_t pid, pid_t *ppid, char *comm, size_t comm_len)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name is in parentheses and may itself contain spaces or ')'. */
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close || close < open)
        return -1;
    snprintf(comm, comm_len, "%.*s", (int)(close - open - 1), open + 1);
    int pp = 0;
    char state;
    if (sscanf(close + 1, " %c %d", &state, &pp) != 2)
        return -1;
    *ppid = pp;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int code = argc > 1 ? atoi(argv[1]) : 3;
    const char *needle = argc > 2 ? argv[2] : "libmpiwatch";

    char ancestors[4096] = "";
    size_t used = 0;
    pid_t pid = getppid();
    for (int depth = 0; pid > 1 && depth < 64; depth++) {
        char comm[64] = "?";
        pid_t next = 0;
        if (proc_parent(pid, &next, comm, sizeof comm) != 0)
            break;
        if (maps_has(pid, needle) == 1 && used < sizeof ancestors - 100)
            used += (size_t)snprintf(ancestors + used, sizeof ancestors - used, "%s%s(%d)",
                                     used ? "," : "", comm, (int)pid);
        pid = next;
    }

    printf("probe rank %d self=%d ancestors=%s\n", rank, maps_has(getpid(), needle) == 1,
           used ? ancestors : "none");
    fflush(stdout);
    MPI_Finalize();
    return code;
}
