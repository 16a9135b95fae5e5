/* OpenCANN: what a generated aclnn_<op>.h includes. */
#ifndef OPENCANN_ACLNN_ACLNN_BASE_H_
#define OPENCANN_ACLNN_ACLNN_BASE_H_

#include "aclnn/acl_meta.h"

#endif /* OPENCANN_ACLNN_ACLNN_BASE_H_ */
