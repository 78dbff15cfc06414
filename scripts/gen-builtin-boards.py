#!/usr/bin/env python3
"""Writes the NVIDIA reference boards other than DGX H100 (gen-builtin-h100.py):
  builtins/dgx-a100.xml  DGX A100 (DGX A100 User Guide and System Architecture
      white paper: 2 x AMD EPYC 7742, 8 x A100-SXM4-40GB with 12 NVLink3 links,
      2 to each of 6 NVSwitches, 8 x ConnectX-6 HDR 200 Gb/s compute NICs, 4 PCIe
      Gen4 switch complexes of two levels, each with 2 GPUs and 2 NICs). GPU, NIC
      and NVSwitch bus ids are those `nvidia-smi topo -m` shows on DGX A100.
  builtins/hgx-b200.xml  HGX B200 as in DGX B200 (DGX B200 User Guide: 2 x Xeon
      Platinum 8570, 8 x B200 with 18 NVLink5 links to 2 NVSwitch chips, 8 x
      ConnectX-7 400 Gb/s, one GPU and one NIC per PCIe Gen5 switch, four per
      socket). Bus ids are our own choice.
Usage: gen-builtin-boards.py a100|b200 > FILE"""
import sys


def pci(busid, cls, vendor, device, speed, indent, close=False):
    return (f'{" " * indent}<pci busid="{busid}" class="{cls}" vendor="{vendor}" '
            f'device="{device}" subsystem_vendor="{vendor}" subsystem_device="0x0000" '
            f'link_speed="{speed}" link_width="16"{"/" if close else ""}>')


def gpu(busid, dev, sm, device, speed, nvlinks, indent):
    pad = " " * indent
    out = [pci(busid, "0x030200", "0x10de", device, speed, indent),
           f'{pad}  <gpu dev="{dev}" sm="{sm}" rank="{dev}" gdr="1">']
    out += [f'{pad}    <nvlink target="{t}" count="{n}" tclass="0x068000"/>' for t, n in nvlinks]
    return out + [f'{pad}  </gpu>', f'{pad}</pci>']


def nic(busid, dev, device, speed_mbps, pcie, guid, indent):
    pad = " " * indent
    return [pci(busid, "0x020700", "0x15b3", device, pcie, indent), f'{pad}  <nic>',
            f'{pad}    <net name="mlx5_{dev}" dev="{dev}" speed="{speed_mbps}" port="1" '
            f'latency="0.000000" guid="0x{guid + dev:x}" maxconn="131072" gdr="1"/>',
            f'{pad}  </nic>', f'{pad}</pci>']


A100_NVSWITCHES = [(f"0000:{b:02x}:00.0", 2) for b in range(0xc4, 0xca)]
# Per socket: two complexes (level-1 switch, two level-2 switches with a GPU and a NIC each).
A100_COMPLEXES = [
    ("01", [("03", "07", "0c"), ("0d", "0f", "12")]),
    ("41", [("43", "47", "4b"), ("4c", "4e", "54")]),
    ("81", [("83", "87", "8d"), ("8e", "90", "94")]),
    ("b1", [("b3", "b7", "ba"), ("bb", "bd", "cc")]),
]
A100_AFFINITY = ["00000000,ffffffff,00000000,ffffffff", "ffffffff,00000000,ffffffff,00000000"]


def a100():
    gen4 = "16.0 GT/s PCIe"
    lines = ['<!-- DGX A100: 8 x A100-SXM4-40GB on 6 NVSwitches, 8 x ConnectX-6 HDR 200G '
             '(2 GPUs + 2 NICs per PCIe switch complex), 2 x AMD EPYC 7742 -->',
             '<system version="1">']
    dev = 0
    for socket in range(2):
        lines.append(f'  <cpu numaid="{socket}" affinity="{A100_AFFINITY[socket]}" arch="x86_64" '
                     f'vendor="AuthenticAMD" familyid="143" modelid="49">')
        for top, subs in A100_COMPLEXES[socket * 2:socket * 2 + 2]:
            lines.append(pci(f"0000:{top}:00.0", "0x060400", "0x1000", "0xc010", gen4, 4))
            for sw, g, n in subs:
                lines.append(pci(f"0000:{sw}:00.0", "0x060400", "0x1000", "0xc010", gen4, 6))
                lines += gpu(f"0000:{g}:00.0", dev, 80, "0x20b0", gen4, A100_NVSWITCHES, 8)
                lines += nic(f"0000:{n}:00.0", dev, "0x101b", 200000, gen4, 0x1070fd0300d2e4a0, 8)
                lines.append('      </pci>')
                dev += 1
            lines.append('    </pci>')
        lines.append('  </cpu>')
    return lines + ['</system>']


B200_SWITCH_BUSES = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]
B200_NVSWITCHES = [("0000:05:00.0", 9), ("0000:06:00.0", 9)]
B200_AFFINITY = ["00000000,00000000,ffffffff,ffffffff", "ffffffff,ffffffff,00000000,00000000"]


def b200():
    gen5 = "32.0 GT/s PCIe"
    lines = ['<!-- HGX B200 (DGX B200 layout): 8 x B200 on 2 NVSwitch chips (18 NVLink5 links), '
             '8 x ConnectX-7 400G (one per GPU, same PCIe Gen5 switch), 2 x Xeon Platinum 8570 -->',
             '<system version="1">']
    for socket in range(2):
        lines.append(f'  <cpu numaid="{socket}" affinity="{B200_AFFINITY[socket]}" arch="x86_64" '
                     f'vendor="GenuineIntel" familyid="6" modelid="207">')
        for idx in range(socket * 4, socket * 4 + 4):
            bus = B200_SWITCH_BUSES[idx]
            lines.append(pci(f"0000:{bus:02x}:00.0", "0x060400", "0x1000", "0xc030", gen5, 4))
            lines += nic(f"0000:{bus + 1:02x}:00.0", idx, "0x1021", 400000, gen5,
                         0xb088c20300e2f000, 6)
            lines += gpu(f"0000:{bus + 2:02x}:00.0", idx, 100, "0x2901", gen5, B200_NVSWITCHES, 6)
            lines.append('    </pci>')
        lines.append('  </cpu>')
    return lines + ['</system>']


if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which not in ("a100", "b200"):
        sys.exit(__doc__)
    sys.stdout.write("\n".join(a100() if which == "a100" else b200()) + "\n")
