#!/usr/bin/env python3
"""Writes the decompression-bomb PDF of issue 19: 100 pages whose /Contents all point at one
deflated stream of `q Q ` repeated to 31 MiB (about 46 KB on disk).

usage: bomb_pdf.py OUT.pdf [PAGES] [MIB]
"""
import sys
import zlib


def bomb(pages=100, mib=31):
    content = b"q Q " * (mib * 1024 * 1024 // 4)
    packed = zlib.compress(content, 9)
    objects = []
    kids = " ".join(f"{4 + i} 0 R" for i in range(pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    objects.append(
        f"<< /Length {len(packed)} /Filter /FlateDecode >>\nstream\n".encode()
        + packed
        + b"\nendstream"
    )
    for _ in range(pages):
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


if __name__ == "__main__":
    pages = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    mib = int(sys.argv[3]) if len(sys.argv) > 3 else 31
    data = bomb(pages, mib)
    with open(sys.argv[1], "wb") as f:
        f.write(data)
    print(f"{sys.argv[1]}: {len(data)} bytes, {pages} pages sharing {mib} MiB of content")
