/* Stand-in for NVIDIA SHARP's public header sharp/api/sharp_coll.h, written for rdmabench's
 * tests from the documented API (docs/collectives.md). It declares only what rdmabench calls,
 * with the names, enum values and structure layouts of the documented interface, so the same
 * rdmabench source builds against this header and against HPC-X's. Not NVIDIA's file. */
#ifndef RDMABENCH_SHARP_STANDIN_SHARP_COLL_H
#define RDMABENCH_SHARP_STANDIN_SHARP_COLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types; bit i of sharp_coll_caps.support_mask.dtypes = type i supported. */
enum sharp_datatype {
  SHARP_DTYPE_UNSIGNED,       /* uint32 */
  SHARP_DTYPE_INT,            /* int32 */
  SHARP_DTYPE_UNSIGNED_LONG,  /* uint64 */
  SHARP_DTYPE_LONG,           /* int64 */
  SHARP_DTYPE_FLOAT,          /* float32 */
  SHARP_DTYPE_DOUBLE,         /* float64 */
  SHARP_DTYPE_UNSIGNED_SHORT, /* uint16 */
  SHARP_DTYPE_SHORT,          /* int16 */
  SHARP_DTYPE_FLOAT_SHORT,    /* fp16 */
  SHARP_DTYPE_BFLOAT16,       /* bf16 */
  SHARP_DTYPE_UINT8,
  SHARP_DTYPE_INT8,
  SHARP_DTYPE_NULL
};

/* Reduction operators; bit i of support_mask.reduce_ops = operator i supported. */
enum sharp_reduce_op {
  SHARP_OP_MAX,
  SHARP_OP_MIN,
  SHARP_OP_SUM,
  SHARP_OP_PROD,
  SHARP_OP_LAND,
  SHARP_OP_BAND,
  SHARP_OP_LOR,
  SHARP_OP_BOR,
  SHARP_OP_LXOR,
  SHARP_OP_BXOR,
  SHARP_OP_MAXLOC,
  SHARP_OP_MINLOC,
  SHARP_OP_NULL
};

/* Return codes (0 = success); sharp_coll_strerror() gives the text. */
enum sharp_error_no {
  SHARP_COLL_SUCCESS = 0,
  SHARP_COLL_ERROR = -1,
  SHARP_COLL_ENOT_SUPP = -2,
  SHARP_COLL_ENOMEM = -3,
  SHARP_COLL_EGROUP_ALLOC = -4,
  SHARP_COLL_ECONN_TREE = -5,
  SHARP_COLL_EGROUP_JOIN = -6,
  SHARP_COLL_EQUOTA = -7,
  SHARP_COLL_ESESS_INIT = -8,
  SHARP_COLL_EDEV = -9,
  SHARP_COLL_EINVAL = -10,
  SHARP_COLL_EJOB_CREATE = -11,
  SHARP_COLL_ETREE_INFO = -12,
  SHARP_COLL_ENOTREE = -13,
  SHARP_COLL_EGROUP_ID = -14,
  SHARP_COLL_EOOB = -15,
  SHARP_COLL_EGROUP_MCAST = -16,
  SHARP_COLL_EGROUP_TRIM = -17,
  SHARP_COLL_ELOCK_FAILED = -18,
  SHARP_COLL_ELOCK_DENIED = -19,
  SHARP_COLL_ENO_RESOURCE = -20
};

enum sharp_aggregation_mode {
  SHARP_AGGREGATION_NONE = 0, /* the library chooses */
  SHARP_AGGREGATION_DATAGRAM,
  SHARP_AGGREGATION_STREAMING
};

struct sharp_coll_context;
struct sharp_coll_comm;

/* Library configuration; start from sharp_coll_default_config. */
struct sharp_coll_config {
  const char* ib_dev_list;     /* "mlx5_0:1" */
  int user_progress_num_polls; /* polls between calls of progress_func */
  int coll_timeout;            /* per collective, milliseconds; -1 = none */
  uint32_t flags;
  int reserved[3];
};
extern const struct sharp_coll_config sharp_coll_default_config;

/* The out-of-band collectives the application provides (used at init and comm_init; the
 * stand-in also moves its data through them). Each returns 0 on success. */
struct sharp_coll_out_of_band_colls {
  int (*bcast)(void* context, void* buffer, int len, int root);
  int (*barrier)(void* context);
  int (*gather)(void* context, int root, void* sbuf, void* rbuf, int len);
};

struct sharp_coll_comm_init_spec {
  int rank;
  int size;
  void* oob_ctx;
  const uint32_t* group_world_ranks; /* NULL = the world, in order */
  int reserved[2];
};

struct sharp_coll_init_spec {
  uint64_t job_id; /* identical on every rank of the job */
  int world_rank;
  int world_size;
  int (*progress_func)(void);
  int group_channel_idx;
  struct sharp_coll_config config;
  struct sharp_coll_out_of_band_colls oob_colls;
  int world_local_rank;
  int enable_thread_support;
  void* oob_ctx;
  int reserved[4];
};

/* What sharp_coll_caps_query() reports. */
struct sharp_coll_caps {
  int sharp_pkt_version;
  uint64_t reserved[2];
  struct {
    uint64_t dtypes;     /* bit per enum sharp_datatype */
    uint64_t tag_dtypes; /* MINLOC/MAXLOC tags */
    uint64_t reduce_ops; /* bit per enum sharp_reduce_op */
    uint64_t feature_mask;
    uint64_t reserved[4];
  } support_mask;
  struct {
    int max_osts;          /* outstanding transactions per tree */
    int user_data_per_ost; /* payload bytes per OST */
    int max_groups;
    int max_group_channels;
    int osts_per_group;
  } resources;
};

enum sharp_data_buffer_type { SHARP_DATA_BUFFER, SHARP_DATA_IOV };
enum sharp_data_memory_type { SHARP_MEM_TYPE_HOST, SHARP_MEM_TYPE_CUDA, SHARP_MEM_TYPE_LAST };

struct sharp_data_iov {
  void* ptr;
  size_t length;
  void* mem_handle;
};

struct sharp_coll_data_desc {
  enum sharp_data_buffer_type type;
  enum sharp_data_memory_type mem_type;
  int reserved[2];
  union {
    struct {
      void* ptr;
      size_t length;    /* bytes */
      void* mem_handle; /* from sharp_coll_reg_mr */
    } buffer;
    struct {
      unsigned count;
      struct sharp_data_iov* vector;
    } iov;
  };
};

struct sharp_coll_reduce_spec {
  int root; /* ignored by allreduce */
  struct sharp_coll_data_desc sbuf_desc;
  struct sharp_coll_data_desc rbuf_desc;
  enum sharp_datatype dtype;
  size_t length; /* elements */
  enum sharp_reduce_op op;
  enum sharp_datatype tag_dtype;
  enum sharp_aggregation_mode aggr_mode;
  int stream_lock_batch_size;
  size_t offset;
  int reserved[2];
};

int sharp_coll_init(struct sharp_coll_init_spec* spec, struct sharp_coll_context** context);
int sharp_coll_finalize(struct sharp_coll_context* context);
int sharp_coll_caps_query(struct sharp_coll_context* context, struct sharp_coll_caps* caps);
int sharp_coll_comm_init(struct sharp_coll_context* context, struct sharp_coll_comm_init_spec* spec,
                         struct sharp_coll_comm** comm);
int sharp_coll_comm_destroy(struct sharp_coll_comm* comm);
int sharp_coll_do_barrier(struct sharp_coll_comm* comm);
int sharp_coll_do_allreduce(struct sharp_coll_comm* comm, struct sharp_coll_reduce_spec* spec);
int sharp_coll_reg_mr(struct sharp_coll_context* context, void* buf, size_t size, void** mr);
int sharp_coll_dereg_mr(struct sharp_coll_context* context, void* mr);
const char* sharp_coll_strerror(int error);

#ifdef __cplusplus
}
#endif
#endif
