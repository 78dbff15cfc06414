#!/usr/bin/env python3
"""Writes builtins/dgx-h100.xml: an 8 x H100 SXM5 NVSwitch machine, from public facts
(DGX H100 user guide: 2 x Xeon Platinum 8480C, 8 x H100 SXM5 with 18 NVLink4 links
to 4 NVSwitch chips (5+4+4+5), 8 x ConnectX-7 400 Gb/s, one GPU and one NIC per
PCIe Gen5 switch, four switches per socket). Bus ids are our own choice."""
import sys

SWITCH_BUSES = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]
NVSWITCHES = [(0x05, 5), (0x06, 4), (0x07, 4), (0x08, 5)]
AFFINITY = ["00000000,00000000,ffffffff,ffffffff", "ffffffff,ffffffff,00000000,00000000"]

def pci(bus, cls, vendor, device, indent):
    return (f'{" " * indent}<pci busid="0000:{bus:02x}:00.0" class="{cls}" vendor="{vendor}" '
            f'device="{device}" subsystem_vendor="{vendor}" subsystem_device="0x0000" '
            f'link_speed="32.0 GT/s PCIe" link_width="16">')

def gpu_block(idx, bus):
    out = [pci(bus + 2, "0x030200", "0x10de", "0x2330", 6),
           f'        <gpu dev="{idx}" sm="90" rank="{idx}" gdr="1">']
    for nvs_bus, count in NVSWITCHES:
        out.append(f'          <nvlink target="0000:{nvs_bus:02x}:00.0" count="{count}" '
                   f'tclass="0x068000"/>')
    out += ['        </gpu>', '      </pci>']
    return out

def nic_block(idx, bus):
    return [pci(bus + 1, "0x020700", "0x15b3", "0x1021", 6), '        <nic>',
            f'          <net name="mlx5_{idx}" dev="{idx}" speed="400000" port="1" '
            f'latency="0.000000" guid="0x{0xa088c20300e1f000 + idx:x}" maxconn="131072" gdr="1"/>',
            '        </nic>', '      </pci>']

def main():
    lines = ['<!-- 8 x H100 SXM5 on 4 NVSwitches, 8 x ConnectX-7 400G (one per GPU, same PCIe Gen5 '
             'switch), 2 x Xeon Platinum 8480C -->', '<system version="1">']
    for socket in range(2):
        lines.append(f'  <cpu numaid="{socket}" affinity="{AFFINITY[socket]}" arch="x86_64" '
                     f'vendor="GenuineIntel" familyid="6" modelid="143">')
        for idx in range(socket * 4, socket * 4 + 4):
            bus = SWITCH_BUSES[idx]
            lines.append(pci(bus, "0x060400", "0x1000", "0xc030", 4).replace('<pci', '<pci', 1))
            lines += nic_block(idx, bus) + gpu_block(idx, bus)
            lines.append('    </pci>')
        lines.append('  </cpu>')
    lines.append('</system>')
    sys.stdout.write("\n".join(lines) + "\n")

main()
