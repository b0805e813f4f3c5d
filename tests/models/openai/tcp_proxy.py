"""A TCP relay on 127.0.0.1 in front of a server, that can die as a server process dies and come back on its port.

:meth:`TCPProxy.kill` is what a client sees of a SIGKILLed server: every open connection is reset (RST, as the
kernel does for a dead process's sockets) and new ones are refused, until :meth:`TCPProxy.start` listens again on
the same port. The server behind it keeps running, so a test of "the server died mid-run, the re-run resumes"
costs no second server start (minutes for vLLM on 2 cores).
"""

from __future__ import annotations

import socket
import struct
import threading


class TCPProxy:
    def __init__(self, target_port: int, port: int = 0, host: str = "127.0.0.1") -> None:
        self.host, self.target_port, self.port = host, target_port, port
        self._listener: socket.socket | None = None
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()

    def start(self) -> TCPProxy:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.host, self.port))
        s.listen(128)
        self.port = s.getsockname()[1]
        self._listener = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()
        return self

    def url(self, path: str = "/v1") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed by kill()
                return
            try:
                upstream = socket.create_connection((self.host, self.target_port))
            except OSError:
                self._reset(client)
                continue
            with self._lock:
                if self._listener is not listener:  # killed meanwhile
                    self._reset(client)
                    self._reset(upstream)
                    return
                self._conns.update((client, upstream))
            done = threading.Semaphore(0)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b, done), daemon=True).start()
            threading.Thread(target=self._close_when_done, args=(client, upstream, done), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket, done: threading.Semaphore) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        done.release()

    def _close_when_done(self, a: socket.socket, b: socket.socket, done: threading.Semaphore) -> None:
        done.acquire()
        done.acquire()
        with self._lock:
            self._conns.difference_update((a, b))
        a.close()
        b.close()

    @staticmethod
    def _reset(sock: socket.socket) -> None:
        """Abort ``sock``: linger 0 makes the close a reset; the shutdown wakes a thread blocked reading it (a
        close alone would wait for that read)."""
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()

    def kill(self) -> None:
        """Refuse new connections and reset every open one, as the death of the server's process would."""
        with self._lock:
            listener, self._listener = self._listener, None
            conns, self._conns = self._conns, set()
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)  # stops listening and wakes the accepting thread
            except OSError:
                pass
            listener.close()
        for c in conns:
            self._reset(c)
