# SPDX-License-Identifier: Apache-2.0

''' Ensembles made from ensembles, and what chooses and governs tools.

    :py:mod:`~invocables.toolsets.wrappers` (filtered, renamed, pinned and
    merged ensembles), :py:mod:`~invocables.toolsets.selection` (which
    tools a turn offers), :py:mod:`~invocables.toolsets.search` (tools
    found by query) and :py:mod:`~invocables.toolsets.policies` (who may
    call what, with approvals). Each reaches calls only through the
    engine's interceptors.
'''
