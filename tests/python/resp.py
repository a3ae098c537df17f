"""A minimal RESP2/RESP3 client over a plain socket, for asserting exact reply bytes."""

import socket


class RawConn:
    """A plain socket speaking RESP, for asserting exact reply bytes."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def cmd(self, *parts):
        self.send(encode_command(parts))

    def read_reply(self):
        """Returns the raw bytes of exactly one reply."""
        while True:
            end = reply_end(self.buf, 0)
            if end is not None:
                reply, self.buf = self.buf[:end], self.buf[end:]
                return reply
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection; pending: %r" % self.buf)
            self.buf += chunk

    def read_until_close(self, timeout=2.0):
        """Everything the server sends until it closes the connection (or `timeout`)."""
        self.sock.settimeout(timeout)
        data, self.buf = self.buf, b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return data
                data += chunk
        except ConnectionResetError:
            return data
        except socket.timeout:
            return data + b"<still open>"

    def roundtrip(self, *parts):
        self.cmd(*parts)
        return self.read_reply()


def reply_end(buf, pos):
    """Index just past the RESP2/RESP3 value starting at `pos`, or None if incomplete."""
    nl = buf.find(b"\r\n", pos)
    if nl < 0:
        return None
    kind, head = buf[pos:pos + 1], buf[pos + 1:nl]
    after = nl + 2
    if kind in b"+-:_,#(":
        return after
    if kind in b"$=!":
        n = int(head)
        if n < 0:
            return after
        return after + n + 2 if len(buf) >= after + n + 2 else None
    if kind in b"*~>%|":
        n = int(head)
        if n < 0:
            return after
        if kind in b"%|":
            n *= 2
        for _ in range(n):
            after = reply_end(buf, after)
            if after is None:
                return None
        if kind == b"|":
            return reply_end(buf, after)
        return after
    raise ValueError("bad RESP type byte %r at %d in %r" % (kind, pos, buf))


def encode_command(parts):
    """A RESP multibulk request; str, bytes and int arguments."""
    out = [b"*%d\r\n" % len(parts)]
    for p in parts:
        if isinstance(p, str):
            p = p.encode()
        elif isinstance(p, int):
            p = str(p).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(p), p))
    return b"".join(out)


def decode(buf, pos=0):
    """The RESP2/RESP3 value at `pos` and the index past it: bulk and simple
    strings as bytes (str for verbatim text), maps as dicts in reply order,
    sets and pushes as lists, nulls as None, errors as ReplyError."""
    nl = buf.index(b"\r\n", pos)
    kind, head, after = buf[pos:pos + 1], buf[pos + 1:nl], nl + 2
    if kind == b"+":
        return head, after
    if kind == b"-":
        return ReplyError(head.decode("latin-1")), after
    if kind in (b":", b"("):
        return int(head), after
    if kind == b",":
        return float(head), after
    if kind == b"#":
        return head == b"t", after
    if kind == b"_":
        return None, after
    if kind in (b"$", b"=", b"!"):
        n = int(head)
        if n < 0:
            return None, after
        return buf[after:after + n], after + n + 2
    if kind in (b"*", b"~", b">", b"%"):
        n = int(head)
        if n < 0:
            return None, after
        items = []
        for _ in range(n * 2 if kind == b"%" else n):
            v, after = decode(buf, after)
            items.append(v)
        if kind == b"%":
            return dict(zip(items[0::2], items[1::2])), after
        return items, after
    raise ValueError("bad RESP type byte %r at %d" % (kind, pos))


class ReplyError(Exception):
    """An error reply, as decode() returns it."""
