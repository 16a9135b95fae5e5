/*
 * OpenCANN: types of the HCCL-compatible collective communication C API.
 *
 * The names, numeric values and structure layouts below follow Huawei CANN's
 * public HCCL interface (CANN 9.0), so that programs written against CANN's
 * <hccl/hccl_types.h> compile unchanged. The implementation (libhccl.so) runs
 * on the host CPU. Functions are declared in hccl.h.
 *
 * The header is valid C99 and C++. In C++ the size limits and configuration
 * sentinels are typed `const` objects, exactly as CANN spells them; in C, where
 * a `const` object cannot size an array, they are macros with the same names
 * and values.
 */
#ifndef OPENCANN_HCCL_HCCL_TYPES_H_
#define OPENCANN_HCCL_HCCL_TYPES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status code returned by every HCCL function that can fail. Zero is success;
 * anything else is a failure whose rough cause the name gives. The text of a
 * code is available from HcclGetErrorString(). */
typedef enum {
    HCCL_SUCCESS = 0,              /* the call did what it was asked */
    HCCL_E_PARA = 1,               /* an argument is out of range or inconsistent */
    HCCL_E_PTR = 2,                /* a required pointer argument is NULL */
    HCCL_E_MEMORY = 3,             /* memory could not be allocated or accessed */
    HCCL_E_INTERNAL = 4,           /* an internal invariant failed */
    HCCL_E_NOT_SUPPORT = 5,        /* the feature, type or combination is unsupported */
    HCCL_E_NOT_FOUND = 6,          /* a named resource (communicator, rank, file) is unknown */
    HCCL_E_UNAVAIL = 7,            /* a resource exists but cannot be used now */
    HCCL_E_SYSCALL = 8,            /* an operating-system call failed */
    HCCL_E_TIMEOUT = 9,            /* a connect or execution deadline passed */
    HCCL_E_OPEN_FILE_FAILURE = 10, /* a file (e.g. a rank table) could not be opened */
    HCCL_E_TCP_CONNECT = 11,       /* a TCP connection could not be set up */
    HCCL_E_ROCE_CONNECT = 12,      /* an RDMA (RoCE) connection could not be set up */
    HCCL_E_TCP_TRANSFER = 13,      /* a TCP transfer failed */
    HCCL_E_ROCE_TRANSFER = 14,     /* an RDMA (RoCE) transfer failed */
    HCCL_E_RUNTIME = 15,           /* a runtime (aclrt*) call failed */
    HCCL_E_DRV = 16,               /* a driver call failed */
    HCCL_E_PROFILING = 17,         /* a profiling call failed */
    HCCL_E_CCE = 18,               /* a kernel-compiler/engine call failed */
    HCCL_E_NETWORK = 19,           /* a network call failed */
    HCCL_E_AGAIN = 20,             /* transient condition; the caller may retry */
    HCCL_E_REMOTE = 21,            /* the peer reported a completion error */
    HCCL_E_SUSPENDING = 22,        /* the communicator is suspended */
    HCCL_E_OPRETRY_FAIL = 23,      /* an automatic operator retry gave up */
    HCCL_E_OOM = 24,               /* device memory is exhausted */
    HCCL_E_IN_STATUS = 1041,       /* details are held in the communicator's status */
    HCCL_E_RESERVED                /* first value past the defined codes */
} HcclResult;

/* Opaque handle to a communicator (a group of ranks that communicate).
 * Created by the HcclCommInit* functions, released by HcclCommDestroy(). */
typedef void *HcclComm;

/* Element-wise reduction applied by AllReduce, Reduce and ReduceScatter. */
typedef enum {
    HCCL_REDUCE_SUM = 0,       /* sum */
    HCCL_REDUCE_PROD = 1,      /* product */
    HCCL_REDUCE_MAX = 2,       /* maximum */
    HCCL_REDUCE_MIN = 3,       /* minimum */
    HCCL_REDUCE_RESERVED = 255 /* not an operation; marks the end of the list */
} HcclReduceOp;

/* Element type of communication buffers. Counts passed to the collectives are
 * always in elements of this type, never in bytes. Value 13 is unassigned. */
typedef enum {
    HCCL_DATA_TYPE_INT8 = 0,      /* signed 8-bit integer */
    HCCL_DATA_TYPE_INT16 = 1,     /* signed 16-bit integer */
    HCCL_DATA_TYPE_INT32 = 2,     /* signed 32-bit integer */
    HCCL_DATA_TYPE_FP16 = 3,      /* IEEE 754 binary16 */
    HCCL_DATA_TYPE_FP32 = 4,      /* IEEE 754 binary32 */
    HCCL_DATA_TYPE_INT64 = 5,     /* signed 64-bit integer */
    HCCL_DATA_TYPE_UINT64 = 6,    /* unsigned 64-bit integer */
    HCCL_DATA_TYPE_UINT8 = 7,     /* unsigned 8-bit integer */
    HCCL_DATA_TYPE_UINT16 = 8,    /* unsigned 16-bit integer */
    HCCL_DATA_TYPE_UINT32 = 9,    /* unsigned 32-bit integer */
    HCCL_DATA_TYPE_FP64 = 10,     /* IEEE 754 binary64 */
    HCCL_DATA_TYPE_BFP16 = 11,    /* bfloat16 */
    HCCL_DATA_TYPE_INT128 = 12,   /* signed 128-bit integer (16 bytes) */
    HCCL_DATA_TYPE_HIF8 = 14,     /* HiFloat8 (1 byte) */
    HCCL_DATA_TYPE_FP8E4M3 = 15,  /* 8-bit float, 4 exponent / 3 mantissa bits */
    HCCL_DATA_TYPE_FP8E5M2 = 16,  /* 8-bit float, 5 exponent / 2 mantissa bits */
    HCCL_DATA_TYPE_FP8E8M0 = 17,  /* 8-bit scale, 8 exponent / 0 mantissa bits */
    HCCL_DATA_TYPE_RESERVED = 255 /* not a type; marks the end of the list */
} HcclDataType;

/* Process-wide settings read and written by HcclSetConfig()/HcclGetConfig(). */
typedef enum {
    HCCL_DETERMINISTIC = 0, /* 0: reductions may vary run to run; 1: deterministic;
                               2: deterministic and in a fixed reduction order */
    HCCL_CONFIG_RESERVED
} HcclConfig;

/* Value of one HcclConfig setting. */
typedef union HcclConfigValue {
    int32_t value;
} HcclConfigValue;

/* Sizes, in bytes, of fixed character and opaque fields. */
#ifdef __cplusplus
const uint32_t HCCL_ROOT_INFO_BYTES = 4108U;             /* HcclRootInfo payload */
const uint32_t COMM_NAME_MAX_LENGTH = 128U;              /* communicator name, NUL included */
const uint32_t BUFFER_NAME_MAX_LENGTH = 128U;            /* communication buffer name */
const uint32_t UDI_MAX_LENGTH = 128U;                    /* user-defined information */
const uint32_t HCCL_COMM_ALGO_MAX_LENGTH = 1600U;        /* algorithm selection string */
const uint32_t HCCL_COMM_RETRY_ENABLE_MAX_LENGTH = 50U;  /* retry switch string */
const uint32_t HCCL_COMM_RETRY_PARAMS_MAX_LENGTH = 128U; /* retry parameter string */
#else
#define HCCL_ROOT_INFO_BYTES 4108U
#define COMM_NAME_MAX_LENGTH 128U
#define BUFFER_NAME_MAX_LENGTH 128U
#define UDI_MAX_LENGTH 128U
#define HCCL_COMM_ALGO_MAX_LENGTH 1600U
#define HCCL_COMM_RETRY_ENABLE_MAX_LENGTH 50U
#define HCCL_COMM_RETRY_PARAMS_MAX_LENGTH 128U
#endif

/* Rendezvous information produced by HcclGetRootInfo() on one rank and handed,
 * byte for byte and by whatever means the program likes (MPI broadcast, a
 * file, shared memory), to every rank that calls HcclCommInitRootInfo(). The
 * content is private to the library. */
typedef struct HcclRootInfoDef {
    char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

/* Constants of HcclCommConfig. A field left at its *_NOT_SET value means "use
 * the environment variable, or else the library default". */
#ifdef __cplusplus
const uint32_t HCCL_COMM_CONFIG_INFO_BYTES = 24U;           /* size of the header area */
const uint32_t HCCL_COMM_CONFIG_MAGIC_WORD = 0xf0f0f0f0U;   /* marks an initialised config */
const uint32_t HCCL_COMM_CONFIG_VERSION = 10U;              /* layout version of this header */
const uint32_t HCCL_COMM_DEFAULT_BUFFSIZE = 200U;           /* MB, when nothing is configured */
const uint32_t HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET = 0xffffffffU;
const uint32_t HCCL_COMM_DEFAULT_DETERMINISTIC = 0U;
const uint32_t HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET = 0xffffffffU;
const uint32_t HCCL_COMM_DEFAULT_OP_EXPANSION_MODE = 0U;
const uint32_t HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET = 0xffffffffU;
const uint32_t HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET = 0xffffffffU;
const int32_t HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET = -1;    /* all bits set */
const uint32_t HCCL_COMM_QOS_CONFIG_NOT_SET = 0xffffffffU;
const uint32_t HCCL_COMM_HCCL_QOS_CONFIG_NOT_SET = 0xffffffffU; /* older spelling */
const uint64_t HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE = 16ULL;    /* GB */
#else
#define HCCL_COMM_CONFIG_INFO_BYTES 24U
#define HCCL_COMM_CONFIG_MAGIC_WORD 0xf0f0f0f0U
#define HCCL_COMM_CONFIG_VERSION 10U
#define HCCL_COMM_DEFAULT_BUFFSIZE 200U
#define HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET 0xffffffffU
#define HCCL_COMM_DEFAULT_DETERMINISTIC 0U
#define HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET 0xffffffffU
#define HCCL_COMM_DEFAULT_OP_EXPANSION_MODE 0U
#define HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET 0xffffffffU
#define HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET 0xffffffffU
#define HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET ((int32_t)-1)
#define HCCL_COMM_QOS_CONFIG_NOT_SET 0xffffffffU
#define HCCL_COMM_HCCL_QOS_CONFIG_NOT_SET 0xffffffffU
#define HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE 16ULL
#endif

/* Per-communicator options for the *Config initialisers.
 *
 * Always prepare one with HcclCommConfigInit() (hccl.h) and then change only
 * the fields of interest: the initialiser writes a header (structure size,
 * magic word, layout version) into `reserved`, which the library checks, and
 * sets every option to "not set". A zero-filled structure is rejected.
 * New fields are only ever appended, so the header's size tells the library
 * which fields a program compiled against an older layout provides. */
typedef struct HcclCommConfigDef {
    char reserved[HCCL_COMM_CONFIG_INFO_BYTES]; /* header; do not touch */
    uint32_t hcclBufferSize;       /* MB per direction, >= 1; beats HCCL_BUFFSIZE */
    uint32_t hcclDeterministic;    /* 0 off, 1 deterministic, 2 fixed order; beats HCCL_DETERMINISTIC */
    char hcclCommName[COMM_NAME_MAX_LENGTH]; /* unique name; empty: the library picks one */
    char hcclUdi[UDI_MAX_LENGTH];  /* free-form user information, empty by default */
    uint32_t hcclOpExpansionMode;  /* where algorithms are expanded; 0 default, 1 host,
                                      2 device CPU, 3 vector cores */
    uint32_t hcclRdmaTrafficClass; /* RDMA traffic class */
    uint32_t hcclRdmaServiceLevel; /* RDMA service level */
    uint32_t hcclWorldRankID;      /* rank of this process in the whole job */
    uint64_t hcclJobID;            /* job identifier */
    uint8_t aclGraphZeroCopyEnable; /* 1: let captured graphs use buffers in place */
    int32_t hcclExecTimeOut;       /* seconds; beats HCCL_EXEC_TIMEOUT */
    char hcclAlgo[HCCL_COMM_ALGO_MAX_LENGTH];                /* like HCCL_ALGO */
    char hcclRetryEnable[HCCL_COMM_RETRY_ENABLE_MAX_LENGTH]; /* like HCCL_OP_RETRY_ENABLE */
    char hcclRetryParams[HCCL_COMM_RETRY_PARAMS_MAX_LENGTH]; /* like HCCL_OP_RETRY_PARAMS */
    char hcclBufferName[BUFFER_NAME_MAX_LENGTH]; /* share the buffer of this name */
    uint32_t hcclQos;              /* quality-of-service class */
    uint64_t hcclSymWinMaxMemSizePerRank; /* GB of address space reserved for
                                             symmetric memory windows */
} HcclCommConfig;

/* Configuration capabilities, in the order they were added. Option N is
 * understood by the library when HcclGetCommConfigCapability() > N. */
typedef enum {
    HCCL_COMM_CONFIG_BUFFER_SIZE = 0,
    HCCL_COMM_CONFIG_DETERMINISTIC = 1,
    HCCL_COMM_CONFIG_COMM_NAME = 2,
    HCCL_COMM_CONFIG_OP_EXPANSION_MODE = 3,
    HCCL_COMM_CONFIG_SUPPORT_INIT_BY_ENV = 4,
    HCCL_COMM_CONFIG_WORLD_RANKID = 5,
    HCCL_COMM_CONFIG_JOBID = 6,
    HCCL_COMM_CONFIG_ACLGRAPH_ZEROCOPY_ENABLE = 7,
    HCCL_COMM_CONFIG_EXEC_TIMEOUT = 8,
    HCCL_COMM_CONFIG_ALGO = 9,
    HCCL_COMM_CONFIG_RETRY = 10,
    HCCL_COMM_CONFIG_BUFFER_NAME = 11,
    HCCL_COMM_CONFIG_RESERVED
} HcclCommConfigCapability;

/* Direction of one entry of HcclBatchSendRecv(). */
typedef enum {
    HCCL_SEND = 0,
    HCCL_RECV = 1,
    HCCL_SEND_RECV_RESERVED
} HcclSendRecvType;

/* One send or receive of HcclBatchSendRecv(): `count` elements of `dataType`
 * at `buf`, to (HCCL_SEND) or from (HCCL_RECV) rank `remoteRank` of the
 * communicator. */
typedef struct HcclSendRecvItemDef {
    HcclSendRecvType sendRecvType;
    void *buf;
    uint64_t count;
    HcclDataType dataType;
    uint32_t remoteRank;
} HcclSendRecvItem;

#ifdef __cplusplus
}
#endif

#endif /* OPENCANN_HCCL_HCCL_TYPES_H_ */
