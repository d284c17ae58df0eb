import { createSocket } from 'node:dgram';
import { once } from 'node:events';

/** What the test DNS server answers: PTR names per IPv4 address, A addresses per host name. */
export interface DnsRecords {
  ptr: Map<string, string[]>;
  a: Map<string, string[]>;
}

export interface TestDnsServer {
  /** `127.0.0.1:port`, for Resolver#setServers. */
  address: string;
  records: DnsRecords;
  /** Questions received, as `TYPE name`. */
  questions: string[];
  /** Answers wait this long (ms). */
  delayMs: number;
  close(): Promise<void>;
}

const TYPES: Record<number, string> = { 1: 'A', 12: 'PTR', 28: 'AAAA' };

function encodeName(name: string): Buffer {
  const parts = name.replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([...parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p, 'ascii')])), Buffer.from([0])]);
}

/**
 * A real DNS server over UDP on loopback, answering PTR and A questions from `records` (every
 * other question, or a name it does not know: NXDOMAIN). Enough of RFC 1035 for node:dns.
 */
export async function startDnsServer(records: DnsRecords = { ptr: new Map(), a: new Map() }): Promise<TestDnsServer> {
  const socket = createSocket('udp4');
  const server: TestDnsServer = { address: '', records, questions: [], delayMs: 0, close: async () => void socket.close() };
  socket.on('message', (msg, peer) => {
    let offset = 12;
    const labels: string[] = [];
    while (msg[offset]! > 0) {
      labels.push(msg.subarray(offset + 1, offset + 1 + msg[offset]!).toString('ascii'));
      offset += msg[offset]! + 1;
    }
    const question = msg.subarray(12, offset + 5);
    const type = msg.readUInt16BE(offset + 1);
    const name = labels.join('.').toLowerCase();
    server.questions.push(`${TYPES[type] ?? type} ${name}`);
    let rdatas: Buffer[] = [];
    if (type === 12 && name.endsWith('.in-addr.arpa')) {
      const ip = name.slice(0, -'.in-addr.arpa'.length).split('.').reverse().join('.');
      rdatas = (records.ptr.get(ip) ?? []).map(encodeName);
    } else if (type === 1) {
      rdatas = (records.a.get(name) ?? []).map((ip) => Buffer.from(ip.split('.').map(Number)));
    }
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2);
    header.writeUInt16BE(rdatas.length ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(rdatas.length, 6);
    const answers = rdatas.map((rdata) => {
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0);
      rr.writeUInt16BE(type, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(60, 6);
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    const reply = Buffer.concat([header, question, ...answers]);
    setTimeout(() => {
      // A delayed answer may come due after the test closed the server.
      try {
        socket.send(reply, peer.port, peer.address);
      } catch {
        // Closed: nobody is waiting for it any more.
      }
    }, server.delayMs);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  server.address = `127.0.0.1:${socket.address().port}`;
  return server;
}
