# SPDX-License-Identifier: Apache-2.0

''' Outcome of an attempt, shared by the hostile servers of sandboxes.

    The servers run as scripts, so that this module, beside them, is on
    their import path (the sandbox shows a script's folder).
'''


import collections.abc as cabc


def access_outcome( action: cabc.Callable[ [ ], object ] ) -> str:
    ''' Returns ``ok: <what action got>`` or ``refused: <error>``. '''
    try: outcome = action( )
    except OSError as exception:
        return "refused: {name} {text}".format(
            name = type( exception ).__name__, text = exception )
    return f"ok: {outcome}"
