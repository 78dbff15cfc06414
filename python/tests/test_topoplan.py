"""Tests of the topoplan Python module (standard library unittest).

Run from the repository root against a built or installed library:
    TOPOPLAN_LIBRARY=build/libtopoplan.so.0 PYTHONPATH=python python3 -m unittest discover -s python/tests

The Python objects are checked against the library's own JSON reports (which
the CLI prints), and known NCCL 2.22.3 figures: the 4 x V100 NV2 seed fixture
searches 6 ring channels of 20 GB/s (12 collective channels); DGX H100 at 2
nodes 8 of 48 GB/s (16 collective), rail-optimised.
"""

import json
import os
import unittest

import topoplan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
V100 = os.path.join(ROOT, "tests", "fixtures", "v100_nv2.xml")
BAD_GRAPH = os.path.join(ROOT, "tests", "fixtures", "graph_v100_nv2_bad_dev.xml")


class VersionTest(unittest.TestCase):
    def test_versions(self):
        major, minor, patch = topoplan.version_info()
        self.assertEqual(topoplan.version(), f"{major}.{minor}.{patch}")
        self.assertEqual(topoplan.nccl_version(), "2.22.3")
        self.assertIn("dgx-h100", topoplan.builtins())

    def test_nccl_profiles(self):
        listed = {v["nccl"]: v for v in topoplan.versions()}
        self.assertEqual(listed["2.22.3"]["status"], "exact")
        self.assertTrue(listed["2.22.3"]["default"])
        for nccl in ("2.27.5", "2.30.7"):
            # the status is the public tally's: exact when every case passes
            v = listed[nccl]
            self.assertEqual(v["public_total"], 166)
            self.assertFalse(v["default"])
            want = "exact" if v["public_passed"] == v["public_total"] else "partial"
            self.assertEqual(v["status"], want)

    def test_plan_names_its_nccl_version(self):
        with topoplan.plan(V100) as p:
            self.assertEqual(p.nccl, "2.22.3")
            self.assertEqual(p.json("plan")["nccl_version"], "2.22.3")
        with topoplan.plan(V100, nccl="2.27.5") as p:
            self.assertEqual(p.nccl, "2.27.5")
            self.assertEqual(p.json("paths")["nccl_version"], "2.27.5")
        with self.assertRaises(topoplan.TopoplanError) as caught:
            topoplan.plan(V100, nccl="2.99.0")
        self.assertIn("2.22.3, 2.27.5", str(caught.exception))


class TuneTest(unittest.TestCase):
    """NCCL 2.22.3's own choices for 2 DGX H100 nodes (conformance case
    tune_dgx_h100_nodes2): 4 MiB AllReduce on NVLSTree/Simple in 68.728638 us."""

    def test_tune_call_and_report(self):
        dgx = os.path.join(ROOT, "tests", "fixtures", "dgx_h100.xml")
        with topoplan.plan(dgx, nodes=2) as p:
            call = p.tune("AllReduce", 4 << 20)
            self.assertEqual((call.algorithm, call.protocol), ("NVLSTree", "Simple"))
            self.assertEqual("%f" % call.time_us, "68.728638")
            self.assertAlmostEqual(call.busbw_gbs, (4 << 20) / (call.time_us * 1e3) * 1.875)
            doc = p.json("tune")
            allreduce = [c for c in doc["collectives"] if c["name"] == "AllReduce"][0]
            row = [r for r in allreduce["sizes"] if r["bytes"] == 4 << 20][0]
            self.assertEqual(row["algorithm"], call.algorithm)
            with self.assertRaises(ValueError):
                p.tune("AllToAll", 8)


class HeteroTest(unittest.TestCase):
    """A 4-node DGX H100 job whose last node has GPU 0's PCIe link at x8: that
    node searches 7 ring channels where the others find 8, and NCCL gives
    every rank the fewest (7 search channels)."""

    def test_node_topos(self):
        dgx = os.path.join(ROOT, "tests", "fixtures", "dgx_h100.xml")
        x8 = os.path.join(ROOT, "tests", "fixtures", "dgx_h100_gpu0_x8.xml")
        with topoplan.plan(dgx, nodes=4, node_topos=[dgx, dgx, x8]) as p:
            self.assertEqual(p.channels.search_channels, 7)
        with topoplan.plan(dgx, nodes=4) as p:
            self.assertEqual(p.channels.search_channels, 8)


class CompareTest(unittest.TestCase):
    """A health check in Python: a DGX H100 against the same machine with GPU 0's PCIe
    link at x8 (`topoplan check`), the CLI's reports through the library."""

    def test_check_of_a_degraded_node(self):
        dgx = os.path.join(ROOT, "tests", "fixtures", "dgx_h100.xml")
        x8 = os.path.join(ROOT, "tests", "fixtures", "dgx_h100_gpu0_x8.xml")
        with topoplan.plan(dgx, nodes=2) as base, topoplan.plan(x8, nodes=2) as node:
            with topoplan.compare(base, node) as cmp:
                self.assertGreater(len(cmp), 0)
                self.assertEqual((cmp.count("warn"), cmp.count("error")), (1, 0))
                # What it costs a 2-node job: 12 % of the 1 GiB AllReduce's busbw, an error.
                with topoplan.plan(dgx, nodes=2, node_topos=[x8]) as job:
                    cmp.set_job(base, job)
                self.assertEqual((cmp.count("warn"), cmp.count("error")), (0, 1))
                self.assertIn("channels", cmp.why)
                doc = json.loads(cmp.check("json"))
                self.assertEqual(doc["schema"], "topoplan.check")
                self.assertIn("x8", cmp.check())
                self.assertEqual(json.loads(cmp.diff("json"))["schema"], "topoplan.diff")
                page = cmp.html()
                self.assertTrue(page.startswith("<!DOCTYPE html>"))
                self.assertIn("findings", page)
            with topoplan.compare(base, base) as same:
                self.assertEqual((len(same), same.why), (0, ""))
            self.assertRaises(ValueError, cmp.diff)  # closed
        self.assertTrue(topoplan.plan(dgx).html().startswith("<!DOCTYPE html>"))


class V100Test(unittest.TestCase):
    def setUp(self):
        self.plan = topoplan.plan(V100)

    def tearDown(self):
        self.plan.close()

    def test_graphs(self):
        ring = self.plan.graph("ring")
        self.assertEqual(ring.n_channels, 6)
        self.assertEqual((ring.bw_intra, ring.type_intra), (20.0, "NVL"))
        self.assertEqual(ring.channels[0].gpus, [0, 1, 2, 3])
        self.assertEqual(ring.channels[0].nets, [])
        self.assertTrue(ring.decisions and ring.decisions[0].kind == "try")
        doc = self.plan.json("plan")
        for g in doc["graphs"]:
            mine = self.plan.graph(g["graph"])
            self.assertEqual((mine.n_channels, mine.bw_intra, mine.bw_inter, mine.cross_nic),
                             (g["n_channels"], g["bw_intra"], g["bw_inter"], g["cross_nic"]))

    def test_channels_and_rings(self):
        ch = self.plan.channels
        self.assertEqual((ch.n_channels, ch.search_channels, ch.p2p_channels), (12, 6, 16))
        doc = self.plan.json("plan")
        self.assertEqual(ch.n_channels, doc["channels"]["collective"])
        self.assertEqual(self.plan.rings, doc["rings"])
        rc = self.plan.rank_channel(0, 4)
        self.assertEqual((rc.ring_prev, rc.ring_next, rc.tree_up, rc.tree_down),
                         (2, 3, 1, [3, -1, -1]))
        with self.assertRaises(IndexError):
            self.plan.rank_channel(0, 12)

    def test_system_and_paths(self):
        sys_ = self.plan.system
        self.assertEqual(sys_.count("GPU"), 4)
        gpus = sys_.nodes("GPU")
        self.assertEqual([g.label for g in gpus],
                         ["GPU/0-1a000", "GPU/0-1c000", "GPU/0-1d000", "GPU/0-1e000"])
        path = sys_.path(("GPU", 0), ("GPU", 1))
        self.assertEqual((path.type, path.bw, len(path.hops)), ("NVL", 40.0, 1))
        self.assertEqual(path.bottleneck.dst, "GPU/0-1c000")
        self.assertEqual(sum(1 for l in sys_.links("GPU", 0) if l.type == "NVL"), 3)
        with self.assertRaises(ValueError):
            sys_.count("QPU")

    def test_reports(self):
        log = self.plan.report("nccl-log")
        self.assertIn("12 coll channels", log)
        self.assertEqual(self.plan.log[-1].split(",")[0], "12 coll channels")
        # The resolved topology plans to the same graphs.
        again = topoplan.plan(xml=self.plan.report("topology-xml"))
        self.assertEqual(again.graph("ring").channels, self.plan.graph("ring").channels)
        again.close()
        with self.assertRaises(ValueError):
            self.plan.report("nope")

    def test_closed(self):
        p = topoplan.plan(V100)
        system = p.system
        p.close()
        with self.assertRaises(ValueError):
            p.channels
        # Objects derived from the plan hold its memory: closed with it, never read after.
        for use in (lambda: system.count("GPU"), lambda: system.node("GPU", 0),
                    lambda: system.links("GPU", 0), lambda: system.path(("GPU", 0), ("GPU", 1)),
                    lambda: p.system, lambda: p.nic(0, 0), lambda: p.graph("ring")):
            with self.assertRaises(ValueError):
                use()

    def test_integers_beyond_c_int(self):
        # ctypes would wrap them (2**32 + 2 nodes planned as 2; rank 2**40 read as rank 0).
        for kwargs in ({"nodes": 2**32 + 2}, {"rank": 2**40}, {"nodes": -2**63}):
            with self.assertRaises(OverflowError):
                topoplan.plan(V100, **kwargs)
        with self.assertRaises(OverflowError):
            self.plan.nic(2**40, 0)
        with self.assertRaises(OverflowError):
            self.plan.rank_channel(0, 2**32)
        with self.assertRaises(OverflowError):
            self.plan.system.node("GPU", 2**32)
        with self.assertRaises(OverflowError):
            self.plan.tune("AllReduce", 2**64)
        with self.assertRaises(TypeError):
            topoplan.plan(V100, nodes=2.0)


class EnvironmentTest(unittest.TestCase):
    def test_env_applies(self):
        with topoplan.plan(V100, env={"NCCL_MAX_NCHANNELS": "4"}) as p:
            self.assertEqual(p.channels.n_channels, 4)

    def test_env_read_as_nccl_reads_it(self):
        # NCCL 2.22.3 reads integers with strtoll: trailing text is dropped.
        with topoplan.plan(V100, env={"NCCL_MAX_NCHANNELS": "4abc"}) as p:
            self.assertEqual(p.channels.n_channels, 4)

    def test_bad_rank(self):
        with self.assertRaises(topoplan.TopoplanError) as cm:
            topoplan.plan(V100, rank=4)
        self.assertEqual(cm.exception.source, "job.rank")
        self.assertEqual(cm.exception.log, [])

    def test_nccl_failure_has_log(self):
        with self.assertRaises(topoplan.TopoplanError) as cm:
            topoplan.plan(V100, env={"NCCL_GRAPH_FILE": BAD_GRAPH})
        self.assertEqual(cm.exception.status, "graph error")
        self.assertTrue(cm.exception.log)

    def test_one_topology_source(self):
        with self.assertRaises(ValueError):
            topoplan.plan(V100, builtin="dgx-h100")
        with self.assertRaises(ValueError):
            topoplan.plan(builtin="no-such-machine")


class H100Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.plan = topoplan.plan(builtin="dgx-h100", nodes=2)

    @classmethod
    def tearDownClass(cls):
        cls.plan.close()

    def test_ring(self):
        ring = self.plan.graph("ring")
        self.assertEqual((ring.n_channels, ring.bw_intra, ring.cross_nic), (8, 48.0, 1))
        self.assertEqual(ring.channels[1].nets, [1, 0])
        self.assertEqual(self.plan.channels.n_channels, 16)

    def test_nics_match_the_nics_report(self):
        doc = self.plan.json("nics")
        checked = 0
        for r in doc["ranks"]:
            for use in r["channels"]:
                nic = self.plan.nic(r["rank"], use["channel"])
                self.assertEqual((nic.net_dev, nic.proxy_rank, nic.gdr),
                                 (use["net"], use["proxy"], use["gdr"]))
                checked += 1
            for p2p in r["p2p"]:
                channels = self.plan.p2p_channels(r["rank"], p2p["peer"])
                self.assertEqual(channels, [t["channel"] for t in p2p["parts"]])
                for part in p2p["parts"]:
                    nic = self.plan.nic(r["rank"], part["channel"], peer=p2p["peer"])
                    self.assertEqual((nic.net_dev, nic.proxy_rank, nic.gdr),
                                     (part["net"], part["proxy"], part["gdr"]))
                    checked += 1
        self.assertEqual(checked, 8 * 4 + 8 * 8 * 2)

    def test_inner_gpu_opens_no_nic(self):
        # ring channel 0: NET/0 -> 0 7 6 5 4 3 2 1 -> NET/1
        nic = self.plan.nic(rank=3, channel=0)
        self.assertEqual((nic.role, nic.net_dev, nic.proxy_rank), ("none", -1, -1))
        self.assertIn("inner GPU of ring channel 0", nic.why)
        self.assertEqual(self.plan.nic(rank=0, channel=0).role, "receive")
        self.assertEqual(self.plan.nic(rank=1, channel=0).role, "send")

    def test_nvls_matches_nccl_log(self):
        t = [self.plan.nvls(0, c) for c in (0, 1)]
        self.assertEqual((t[0].head_rank, t[0].down, t[0].n_heads), (0, 17, 8))
        text = "NVLS Trees : %d/%d/%d->0->%d %d/%d/%d->0->%d" % (
            *t[0].tree_down, t[0].tree_up, *t[1].tree_down, t[1].tree_up)
        self.assertEqual([l for l in self.plan.log if "NVLS Trees" in l][0],
                         text)
        with self.assertRaises(IndexError):
            self.plan.nvls(16, 0)

    def test_nic_findings(self):
        self.assertEqual(self.plan.nic_findings, self.plan.json("nics")["findings"])

    def test_to_dict(self):
        d = self.plan.to_dict()
        self.assertEqual(d["channels"]["n_channels"], 16)
        self.assertEqual(len(d["nics"]), 8)
        self.assertEqual(d["nics"][1][0]["net_dev"], 1)


if __name__ == "__main__":
    unittest.main()
