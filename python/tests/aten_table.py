"""torch's own op table, read the way the mode's CPU tests check their registrations against
it (not a test module: the tests import it)."""


def overloads_with_kernels(torch, overrides, key):
    """Each overload (``"mm.out"``, ``"addmm_"``, ...) of an op in ``overrides`` or of its
    in-place form that has a kernel of its own at dispatch key ``key``."""
    found = []
    for base in sorted({op.split(".")[0] for op in overrides}):
        # The op's overloads, and its in-place form's (addmm_, ...) where it has one.
        for packet_name in (base, base + "_"):
            if not hasattr(torch.ops.aten, packet_name):
                continue
            packet = getattr(torch.ops.aten, packet_name)
            for overload in packet.overloads():
                name = packet_name + ("." + overload if overload != "default" else "")
                if torch._C._dispatch_has_kernel_for_dispatch_key(getattr(packet, overload).name(), key):
                    found.append(name)
    return found
