/*
 * OpenCANN: the HCCL-compatible collective communication C API.
 *
 * Function names, parameter lists and semantics follow Huawei CANN's public
 * HCCL interface (CANN 9.0, where CANN splits the same declarations between
 * hccl.h and hccl_comm.h), so that HCCL programs compile unchanged and link
 * with -lhccl -lascendcl. The implementation (libhccl.so) runs on the host CPU.
 *
 * Vocabulary used below:
 *   rank        one member of a communicator, numbered 0 .. rankSize-1.
 *   count       a number of elements of the given HcclDataType, never bytes.
 *   device      buffers passed to the operations are device memory of the
 *               calling thread's current device (aclrtMalloc and friends).
 *   stream      every communication operation is enqueued on `stream` (NULL
 *               is the default stream of the current context) and returns as
 *               soon as it is queued; its buffers must stay valid and
 *               untouched until the stream has run past it, e.g. until
 *               aclrtSynchronizeStream() returns. A failure found while the
 *               operation runs is reported by the stream and by
 *               HcclGetCommAsyncError().
 *   collective  every rank of the communicator must issue the same sequence
 *               of collective operations with matching arguments (count,
 *               dataType, op, root), or the operation hangs until
 *               HCCL_EXEC_TIMEOUT and then fails.
 *
 * Each function returns HCCL_SUCCESS on success and another HcclResult on
 * failure, unless its comment says otherwise. Functions may be called from
 * any thread; one communicator must not be used by two threads at once.
 */
#ifndef OPENCANN_HCCL_HCCL_H_
#define OPENCANN_HCCL_HCCL_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include "hccl_types.h"
/* Relative, so that the header works whether the include path names
 * <root>/include or <root>/include/hccl. Provides aclrtStream and, as CANN's
 * hccl.h does, the rest of AscendCL. */
#include "../acl/acl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* libhccl.so is built with hidden visibility; this marks what it exports. */
#ifndef HCCL_FUNC_VISIBILITY
#define HCCL_FUNC_VISIBILITY ACL_FUNC_VISIBILITY
#endif

/* ------------------------------------------------------------------------ */
/* Communicator creation and destruction                                     */
/* ------------------------------------------------------------------------ */

/* Creates the communicator described by a rank table file.
 * clusterInfo: path of a rank table JSON file (at most 4095 characters); every
 *   rank must read an identical description of the cluster.
 * rank: this process's rank; must equal one "rank_id" of the file.
 * comm: receives the new communicator.
 * Blocks until every rank of the table has joined or HCCL_CONNECT_TIMEOUT
 * expires. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm);

/* As HcclCommInitClusterInfo(), with per-communicator options. `config` must
 * have been prepared by HcclCommConfigInit(); options it sets take precedence
 * over the corresponding environment variables. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank,
                                                              HcclCommConfig *config, HcclComm *comm);

/* Produces the rendezvous information for a new communicator. Call it on one
 * rank (conventionally rank 0), after selecting a device, and pass the bytes
 * unchanged to every rank's HcclCommInitRootInfo(). The calling process
 * listens for the other ranks on the host address chosen by HCCL_IF_IP or
 * HCCL_SOCKET_IFNAME, from port HCCL_IF_BASE_PORT upwards. */
HCCL_FUNC_VISIBILITY HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo);

/* Creates a communicator of nRanks ranks from rendezvous information.
 * nRanks: number of ranks; identical on every rank.
 * rootInfo: the bytes produced by HcclGetRootInfo(); identical on every rank.
 * rank: this caller's rank, 0 <= rank < nRanks, distinct on every rank.
 * comm: receives the new communicator.
 * Collective over the nRanks callers; blocks until all have joined or
 * HCCL_CONNECT_TIMEOUT expires. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                                     HcclComm *comm);

/* As HcclCommInitRootInfo(), with per-communicator options prepared by
 * HcclCommConfigInit(). */
HCCL_FUNC_VISIBILITY HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo,
                                                           uint32_t rank, const HcclCommConfig *config,
                                                           HcclComm *comm);

/* Creates ndev communicators at once, one per device, for a single process
 * driving several devices (not across machines).
 * devices: ndev logical device ids; devices[i] becomes rank i.
 * comms: array of ndev handles that receives the communicators. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm *comms);

/* Splits a sub-communicator off an existing (global) communicator without a
 * new rendezvous.
 * comm: points to the parent communicator.
 * rankNum, rankIds: size and sorted list of parent ranks forming the
 *   sub-communicator; rankIds[i] becomes sub-rank i. A rank that takes no
 *   part passes rankIds == NULL and subCommId == 0xFFFFFFFF.
 * subCommId: identifier unique among the parent's sub-communicators; unless
 *   config names the sub-communicator, its name is derived from it.
 * subCommRankId: this rank's index in rankIds.
 * config: options prepared by HcclCommConfigInit().
 * subComm: receives the new communicator.
 * All members must pass identical rankNum, rankIds, subCommId and config.
 * Only a communicator created by an initialiser can be split (no nesting). */
HCCL_FUNC_VISIBILITY HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum, uint32_t *rankIds,
                                                        uint64_t subCommId, uint32_t subCommRankId,
                                                        HcclCommConfig *config, HcclComm *subComm);

/* Releases a communicator and everything it holds. Work already queued on
 * streams for it must have finished. The handle is invalid afterwards. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommDestroy(HcclComm comm);

/* ------------------------------------------------------------------------ */
/* Communicator queries and settings                                         */
/* ------------------------------------------------------------------------ */

/* Stores the number of ranks of `comm` in *rankSize. */
HCCL_FUNC_VISIBILITY HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize);

/* Stores the caller's rank in `comm` in *rank. */
HCCL_FUNC_VISIBILITY HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank);

/* Copies the NUL-terminated name of `comm` into commName, which must hold
 * COMM_NAME_MAX_LENGTH (128) bytes. */
HCCL_FUNC_VISIBILITY HcclResult HcclGetCommName(HcclComm comm, char *commName);

/* Looks up a live communicator of this process by name; HCCL_E_NOT_FOUND if
 * there is none. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommGetHandleWithName(const char *commName, HcclComm *comm);

/* Stores in *asyncError the first failure met by an operation of `comm` after
 * it was queued (HCCL_SUCCESS if none). */
HCCL_FUNC_VISIBILITY HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError);

/* Returns a static, NUL-terminated English description of `code`. Never NULL;
 * an unknown code gets a generic description. */
HCCL_FUNC_VISIBILITY const char *HcclGetErrorString(HcclResult code);

/* Sets or reads a process-wide setting; affects communicators created later. */
HCCL_FUNC_VISIBILITY HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue);
HCCL_FUNC_VISIBILITY HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *configValue);

/* Returns a number N such that every HcclCommConfigCapability value below N
 * names an HcclCommConfig option this library honours. Cannot fail. */
HCCL_FUNC_VISIBILITY uint32_t HcclGetCommConfigCapability(void);

/* Prepares *config for the *Config initialisers: writes the header the
 * library checks (size of this layout, HCCL_COMM_CONFIG_MAGIC_WORD,
 * HCCL_COMM_CONFIG_VERSION), sets every option to "not set" (so environment
 * variables and defaults apply) and empties the strings. NULL is ignored. */
static inline void HcclCommConfigInit(HcclCommConfig *config)
{
    /* Layout of the 24-byte header kept in config->reserved. */
    struct HcclCommConfigHeader {
        size_t size;
        uint32_t magicWord;
        uint32_t version;
        uint64_t reserved;
    } header;

    if (!config) {
        return;
    }
    memset(config, 0, sizeof(*config));
    header.size = sizeof(HcclCommConfig);
    header.magicWord = HCCL_COMM_CONFIG_MAGIC_WORD;
    header.version = HCCL_COMM_CONFIG_VERSION;
    header.reserved = 0;
    memcpy(config->reserved, &header,
           sizeof(header) < sizeof(config->reserved) ? sizeof(header) : sizeof(config->reserved));

    config->hcclBufferSize = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
    config->hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
    config->hcclOpExpansionMode = HCCL_COMM_DEFAULT_OP_EXPANSION_MODE;
    config->hcclRdmaTrafficClass = HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET;
    config->hcclRdmaServiceLevel = HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET;
    config->hcclWorldRankID = 0;
    config->hcclJobID = 0;
    config->aclGraphZeroCopyEnable = 0;
    config->hcclExecTimeOut = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
    config->hcclQos = HCCL_COMM_QOS_CONFIG_NOT_SET;
    config->hcclSymWinMaxMemSizePerRank = HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE;
}

/* Stops a communicator after a fault: queued and future operations fail with
 * HCCL_E_SUSPENDING until HcclCommResume(). */
HCCL_FUNC_VISIBILITY HcclResult HcclCommSuspend(HcclComm comm);

/* Clears the fault state of a suspended communicator and makes it usable. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommResume(HcclComm comm);

/* Switches the listed ranks of `comm` to their primary (useBackup[i] false)
 * or backup (true) network interface. ranks and useBackup hold nRanks items. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommWorkingDevNicSet(HcclComm comm, uint32_t *ranks, bool *useBackup,
                                                         uint32_t nRanks);

/* ------------------------------------------------------------------------ */
/* Zero-copy memory ranges                                                   */
/* ------------------------------------------------------------------------ */

/* Declares a reserved virtual address range [baseVirPtr, baseVirPtr + size)
 * whose buffers `comm` may access in place. alignment and flags must be 0. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommSetMemoryRange(HcclComm comm, void *baseVirPtr, size_t size,
                                                       size_t alignment, uint64_t flags);

/* Withdraws a range declared by HcclCommSetMemoryRange(). */
HCCL_FUNC_VISIBILITY HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void *baseVirPtr);

/* Tells `comm` that [virPtr, virPtr + size), inside a declared range, is now
 * backed by the physical allocation `handle` (an aclrtDrvMemHandle, which is
 * a void pointer). offset and flags must be 0. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommActivateCommMemory(HcclComm comm, void *virPtr, size_t size,
                                                           size_t offset, void *handle, uint64_t flags);

/* Undoes HcclCommActivateCommMemory() for the block starting at virPtr. */
HCCL_FUNC_VISIBILITY HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void *virPtr);

/* ------------------------------------------------------------------------ */
/* Collective operations                                                     */
/* ------------------------------------------------------------------------ */

/* Reduces `count` elements across all ranks with `op` and leaves the result
 * on every rank. sendBuf and recvBuf hold `count` elements each and may be
 * the same buffer. */
HCCL_FUNC_VISIBILITY HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                              HcclReduceOp op, HcclComm comm, aclrtStream stream);

/* Copies `count` elements from buf on rank `root` into buf on every other
 * rank. buf is the input on the root and the output elsewhere. */
HCCL_FUNC_VISIBILITY HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root,
                                              HcclComm comm, aclrtStream stream);

/* Reduces `count` elements across all ranks with `op` into recvBuf of rank
 * `root`. recvBuf is written on the root only. */
HCCL_FUNC_VISIBILITY HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                           HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream);

/* Concatenates every rank's sendCount elements in rank order into recvBuf on
 * every rank: recvBuf holds sendCount * rankSize elements, and rank r's data
 * lands at element offset r * sendCount. */
HCCL_FUNC_VISIBILITY HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount, HcclDataType dataType,
                                              HcclComm comm, aclrtStream stream);

/* AllGather with a per-rank amount: rank r contributes recvCounts[r] elements
 * (its own sendCount must equal that), placed at element offset recvDispls[r]
 * of recvBuf. recvCounts and recvDispls are host arrays of rankSize uint64_t. */
HCCL_FUNC_VISIBILITY HcclResult HcclAllGatherV(void *sendBuf, uint64_t sendCount, void *recvBuf,
                                               const void *recvCounts, const void *recvDispls, HcclDataType dataType,
                                               HcclComm comm, aclrtStream stream);

/* sendBuf on every rank holds rankSize blocks of recvCount elements. Block r
 * of all ranks is reduced with `op` and the result written to recvBuf
 * (recvCount elements) of rank r. */
HCCL_FUNC_VISIBILITY HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
                                                  HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                                                  aclrtStream stream);

/* ReduceScatter with a per-rank amount: block r is sendCounts[r] elements at
 * element offset sendDispls[r] of sendBuf (host arrays of rankSize uint64_t,
 * identical on every rank); rank r receives recvCount == sendCounts[r]
 * elements. */
HCCL_FUNC_VISIBILITY HcclResult HcclReduceScatterV(void *sendBuf, const void *sendCounts, const void *sendDispls,
                                                   void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                                                   HcclReduceOp op, HcclComm comm, aclrtStream stream);

/* sendBuf on rank `root` holds rankSize blocks of recvCount elements; block r
 * is copied into recvBuf of rank r. sendBuf is read on the root only and may
 * be NULL elsewhere. */
HCCL_FUNC_VISIBILITY HcclResult HcclScatter(void *sendBuf, void *recvBuf, uint64_t recvCount, HcclDataType dataType,
                                            uint32_t root, HcclComm comm, aclrtStream stream);

/* Every rank sends block j (sendCount elements, at element offset
 * j * sendCount of sendBuf) to rank j, and stores the block received from
 * rank i at element offset i * recvCount of recvBuf. sendCount and recvCount
 * are equal on all ranks; sendType and recvType must match. */
HCCL_FUNC_VISIBILITY HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
                                             const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
                                             HcclComm comm, aclrtStream stream);

/* AlltoAll with per-peer amounts. sendCounts, sdispls, recvCounts and rdispls
 * are host arrays of rankSize uint64_t, all in elements: this rank sends
 * sendCounts[j] elements starting at element sdispls[j] of sendBuf to rank j,
 * and receives recvCounts[i] elements from rank i into element rdispls[i] of
 * recvBuf. sendCounts[j] here must equal recvCounts[i] on rank j, where i is
 * this rank. */
HCCL_FUNC_VISIBILITY HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls,
                                              HcclDataType sendType, const void *recvBuf, const void *recvCounts,
                                              const void *rdispls, HcclDataType recvType, HcclComm comm,
                                              aclrtStream stream);

/* AlltoAllV driven by one matrix known to every rank: sendCountMatrix is a
 * host array of rankSize * rankSize uint64_t, row-major, where entry
 * [i * rankSize + j] is the number of elements rank i sends to rank j. Blocks
 * are packed back to back in destination order in sendBuf and in source
 * order in recvBuf. Every rank passes the same matrix. */
HCCL_FUNC_VISIBILITY HcclResult HcclAlltoAllVC(const void *sendBuf, const void *sendCountMatrix,
                                               HcclDataType sendType, const void *recvBuf, HcclDataType recvType,
                                               HcclComm comm, aclrtStream stream);

/* Blocks the stream until every rank of `comm` has reached the barrier. */
HCCL_FUNC_VISIBILITY HcclResult HcclBarrier(HcclComm comm, aclrtStream stream);

/* ------------------------------------------------------------------------ */
/* Point-to-point operations                                                 */
/* ------------------------------------------------------------------------ */

/* Sends `count` elements from sendBuf to rank destRank of `comm`, which must
 * post a matching HcclRecv() (same count and dataType, srcRank = this rank).
 * Sends and receives between a pair of ranks are matched in the order they
 * are issued; the stream does not move past the send until the peer has
 * taken the data. */
HCCL_FUNC_VISIBILITY HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
                                         HcclComm comm, aclrtStream stream);

/* Receives `count` elements from rank srcRank of `comm` into recvBuf; the
 * counterpart of HcclSend(). */
HCCL_FUNC_VISIBILITY HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
                                         HcclComm comm, aclrtStream stream);

/* Issues itemNum sends and receives (host array sendRecvInfo) as one
 * operation. Within the call they proceed concurrently and in any order, so
 * a rank may send to and receive from the same peer without deadlock. Every
 * item must be matched by the opposite item on its peer's call, and a call
 * may hold at most one send and one receive per peer. */
HCCL_FUNC_VISIBILITY HcclResult HcclBatchSendRecv(HcclSendRecvItem *sendRecvInfo, uint32_t itemNum, HcclComm comm,
                                                  aclrtStream stream);

/* ------------------------------------------------------------------------ */
/* Group calls                                                               */
/* ------------------------------------------------------------------------ */

/* Starts a group: the communicator initialisations and destructions, or the
 * collective operations, or the point-to-point operations (one kind per
 * group; HcclBatchSendRecv excluded) issued by this thread until
 * HcclGroupEnd() are deferred and then carried out together. This lets one
 * thread initialise several communicators of a single-machine job, or fuse
 * several operations. */
HCCL_FUNC_VISIBILITY HcclResult HcclGroupStart(void);

/* Ends the group opened by the matching HcclGroupStart() and carries out the
 * deferred calls; the first failure among them is returned. */
HCCL_FUNC_VISIBILITY HcclResult HcclGroupEnd(void);

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_HCCL_HCCL_H_ */
