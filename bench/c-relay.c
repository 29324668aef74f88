/*
 * bench/proxy reference: the cheapest separate proxy process there is. One epoll loop, one
 * upstream TCP connection per client, bytes copied both ways with read/write and nothing else
 * (no WebSocket parsing, no allocation, TCP_NODELAY on both legs). Whatever it adds over a direct
 * connection is what any proxy in its own process costs on this machine.
 *
 *   cc -O2 -o c-relay bench/c-relay.c && ./c-relay <target-port>   → prints "relay ready <port>"
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FDS 65536

static int peer_of[MAX_FDS];

static int dial(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in to = {0};
  to.sin_family = AF_INET;
  to.sin_port = htons((unsigned short)port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to) < 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

static void watch(int ep, int fd) {
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
  epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void drop(int ep, int fd) {
  int other = peer_of[fd];
  epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
  epoll_ctl(ep, EPOLL_CTL_DEL, other, NULL);
  close(fd);
  close(other);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: c-relay <target-port>\n");
    return 2;
  }
  int target = atoi(argv[1]);
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  struct sockaddr_in here = {0};
  here.sin_family = AF_INET;
  here.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&here, sizeof here) < 0 || listen(listener, 512) < 0) {
    perror("c-relay: listen");
    return 1;
  }
  socklen_t len = sizeof here;
  getsockname(listener, (struct sockaddr *)&here, &len);
  printf("relay ready %d\n", ntohs(here.sin_port));
  fflush(stdout);

  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = listener};
  epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
  static char buf[65536];
  struct epoll_event ready[64];
  for (;;) {
    int n = epoll_wait(ep, ready, 64, -1);
    for (int i = 0; i < n; i++) {
      int fd = ready[i].data.fd;
      if (fd == listener) {
        int client = accept(listener, NULL, NULL);
        if (client < 0) continue;
        int upstream = dial(target);
        if (upstream < 0 || client >= MAX_FDS || upstream >= MAX_FDS) {
          close(client);
          if (upstream >= 0) close(upstream);
          continue;
        }
        peer_of[client] = upstream;
        peer_of[upstream] = client;
        watch(ep, client);
        watch(ep, upstream);
        continue;
      }
      ssize_t got = read(fd, buf, sizeof buf);
      if (got <= 0) {
        drop(ep, fd);
        continue;
      }
      for (ssize_t off = 0; off < got;) {
        ssize_t put = write(peer_of[fd], buf + off, (size_t)(got - off));
        if (put <= 0) break;
        off += put;
      }
    }
  }
}
