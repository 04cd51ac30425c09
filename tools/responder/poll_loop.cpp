// The responder's poll() loop over the device and the stop eventfd; see
// responder.h.
#include "responder.h"

#include <cerrno>
#include <poll.h>

namespace smbd::responder {

int Responder::serve_poll()
{
    for (;;) {
        pollfd fds[2] = {{smbd_dev_fd(dev_.get()), POLLIN, 0},
                         {stop_fd_, POLLIN, 0}};
        // the master wakes now and then to reap its children
        int n = poll(fds, 2, child_ ? -1 : 100);
        if (n < 0 && errno != EINTR)
            return errno;
        if (fds[1].revents & POLLIN) {
            log("stopping");
            return 0;
        }
        if (!child_)
            reap_children(false);
        if (fds[0].revents & POLLIN) {
            int err = drain_events();
            if (err)
                return err;
        }
        if (finished())
            return 0;
        if ((fds[0].revents & (POLLERR | POLLHUP)) &&
            !(fds[0].revents & POLLIN)) {
            log("the device reports an error: stopping");
            return ENODEV;
        }
    }
}

int Responder::drain_events()
{
    for (;;) {
        size_t count = 0;
        int err = smbd_dev_fetch(dev_.get(), events_.get(), &count);
        if (err) {
            log("%s", smbd_dev_errmsg(dev_.get()));
            return err;
        }
        if (!count)
            return 0;
        for (size_t i = 0; i < count; i++)
            handle(*smbd_dev_events_at(events_.get(), i));
        // what arrived together is started together: one RDMA_RW
        start_transfers();
        flush_sends();
    }
}

} // namespace smbd::responder
