/* The UAPI header compiled as strict C90, as usr/include checks it. */
#include <linux/smbd.h>

/* A translation unit must declare something under -pedantic-errors. */
typedef struct smbd_event smbd_uapi_c90_event;
