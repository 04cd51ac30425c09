/*
 * The tevent glue from the installed headers, linked with
 * `pkg-config --libs libsmbd-tevent`: watches the device on a tevent loop
 * for one short turn, then lets it go.
 */
#include <libsmbd-tevent.h>

#include <stdio.h>

static void on_event(const struct smbd_dev_event *ev, void *private_data)
{
    (void)private_data;
    printf("event %s\n", smbd_dev_event_name(ev->type));
}

static void on_timer(struct tevent_context *ev, struct tevent_timer *te,
                     struct timeval now, void *private_data)
{
    (void)ev;
    (void)te;
    (void)now;
    *(int *)private_data = 1;
}

int main(int argc, char **argv)
{
    struct smbd_dev_open_args args = SMBD_DEV_OPEN_ARGS_INIT;
    TALLOC_CTX *mem = talloc_new(NULL);
    struct tevent_context *ev = tevent_context_init(mem);
    struct smbd_tevent *glue;
    struct smbd_dev *dev;
    char why[256];
    int fired = 0;

    if (argc > 1)
        args.path = argv[1];
    if (smbd_dev_open(&args, &dev, why, sizeof(why))) {
        printf("open failed: %s\n", why);
        return 2;
    }
    glue = smbd_tevent_setup(mem, ev, dev, on_event, NULL);
    if (!glue ||
        !tevent_add_timer(ev, mem, tevent_timeval_current_ofs(0, 10000),
                          on_timer, &fired))
        return 3;
    while (!fired)
        if (tevent_loop_once(ev) != 0)
            return 4;
    talloc_free(mem);
    smbd_dev_close(dev);
    printf("tevent glue watched the device\n");
    return 0;
}
