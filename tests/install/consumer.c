/*
 * A program built as Samba's build would build one: only the installed
 * headers, compiled as C99 and linked with `pkg-config --libs libsmbd`.
 * With a device path it opens it, reports what the kernel offers and
 * writes into a pool buffer; exit 2 with the library's message when the
 * open fails.
 */
#include <libsmbd.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    struct smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    struct smbd_dev_info info;
    struct smbd_dev_buf *buf;
    struct smbd_dev *dev;
    char why[256];
    int err;

    printf("libsmbd %s, header %d.%d.%d\n", smbd_dev_version(),
           LIBSMBD_VERSION_MAJOR, LIBSMBD_VERSION_MINOR, LIBSMBD_VERSION_PATCH);
    if (argc > 1)
        args.path = argv[1];
    args.required_features = SMBD_FEATURE_EVENTS | SMBD_FEATURE_POOL;
    err = smbd_dev_open(&args, &dev, why, sizeof(why));
    if (err) {
        printf("open failed (%d): %s\n", err, why);
        return 2;
    }
    smbd_dev_get_info(dev, &info, sizeof(info));
    printf("opened: ABI %u, features 0x%llx, pool %u x %u bytes\n",
           info.abi_version, (unsigned long long)info.features,
           info.pool_buffers, info.buffer_size);
    err = smbd_dev_buf_alloc(dev, 4096, &buf);
    if (err) {
        printf("%s\n", smbd_dev_errmsg(dev));
        smbd_dev_close(dev);
        return 3;
    }
    memset(smbd_dev_buf_data(buf), 0xa5, smbd_dev_buf_len(buf));
    smbd_dev_buf_free(buf);
    smbd_dev_close(dev);
    printf("pool buffer written and given back\n");
    return 0;
}
