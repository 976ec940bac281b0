# SPDX-License-Identifier: Apache-2.0

''' Helpers of ``benchmarks/peers.py``: invocables side by side with peers.

    Only the public API of invocables is used here, so that the comparison
    survives changes of its internals. Peers are reached through their
    documented entry points where they have one, else through the method
    their own agent loop calls (named in each module).
'''
