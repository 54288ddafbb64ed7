/* Counts the engine's liveness probes as they arrive, for tests/test_stall_reports.py.

   LD_PRELOADed into the ranks of an mpirun job: wraps MPI_Improbe, which only the
   WAGMA engine calls (its control communicator; Horovod does not), and counts the
   messages it matches by tag, the control message's kind (control_messages.h:
   kProbe = 11, kProbeAnswer = 12). A worker reads the counts through ctypes
   (wagma_test_received(tag)). Not linked to libmpi: the real MPI_Improbe is looked
   up at the first call, so mpirun itself, which inherits LD_PRELOAD, is unaffected. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>

static long received[64];

long wagma_test_received(int tag) { return tag >= 0 && tag < 64 ? received[tag] : -1; }

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status) {
  static int (*real)(int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *);
  if (!real) real = (int (*)(int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *))
                        dlsym(RTLD_NEXT, "MPI_Improbe");
  const int rc = real(source, tag, comm, flag, message, status);
  if (rc == MPI_SUCCESS && *flag && status != MPI_STATUS_IGNORE &&
      status->MPI_TAG >= 0 && status->MPI_TAG < 64)
    __atomic_add_fetch(&received[status->MPI_TAG], 1, __ATOMIC_RELAXED);
  return rc;
}
