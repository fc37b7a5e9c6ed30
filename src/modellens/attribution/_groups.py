r"""Groups of features as players: ``ml.shapley(..., groups={"location": ["lat", "lon"]})``.

A group is one player: it joins a coalition with all its features at once,
so the game of the groups is
:math:`v^G(T) = v\big(\bigcup_{g \in T} g\big)` and its Shapley values
answer "how much did the location (latitude and longitude together) move the
prediction?", without splitting the credit between strongly correlated
features whose separate values the background's independence assumption
makes unreliable.  Features named in no group are groups of their own.
:class:`GroupGame` wraps a game that offers coalition rows; every estimator
that plans coalitions runs on it unchanged.
"""

from __future__ import annotations

import numpy as np

from .._validation import InvalidParameterError
from ..data import Column, feature_position
from ._blocks import Subject
from ._games import Game

__all__ = ["Players", "check_groups", "GroupGame"]


class Players:
    """The players of a grouped game: their names and the features of each.

    ``members`` is a boolean matrix ``(G, d)``: player ``g`` owns feature
    ``j`` when ``members[g, j]``.  Players come in the order of their first
    feature's column, so features named in no group keep their places.
    """

    def __init__(self, names: list, members: np.ndarray, feature_names: list):
        self.names, self.members = list(names), members
        #: the player of each column
        self.player_of = members.argmax(axis=0)
        self.features = {name: [feature_names[j] for j in np.flatnonzero(row)]
                         for name, row in zip(self.names, members)}

    def __len__(self) -> int:
        return len(self.names)


def check_groups(groups, feature_names: list, column_labels=None) -> Players:
    """Validate ``groups=`` against the explained columns; the players they define.

    Parameters
    ----------
    groups : dict
        Group name (str) -> list of features (names or integers, the lookup
        rule of every method), each feature in at most one group.
    feature_names : list of str
    column_labels : list, optional
        A DataFrame's own labels (an integer is then a label).
    """
    if not isinstance(groups, dict) or not groups:
        raise InvalidParameterError(
            f"groups must be a non-empty dict of group name -> list of features, e.g. "
            f"groups={{'location': ['lat', 'lon']}}; got {groups!r}.")
    d = len(feature_names)
    owner = np.full(d, -1)
    for g, (name, features) in enumerate(groups.items()):
        if not isinstance(name, str) or not name:
            raise InvalidParameterError(f"group names must be non-empty strings, got {name!r}.")
        if isinstance(features, (str, bytes)) or np.isscalar(features):
            features = [features]
        features = list(features)
        if not features:
            raise InvalidParameterError(f"group {name!r} is empty: give it at least one feature.")
        for feature in features:
            try:
                j = feature_position(feature, feature_names, column_labels)
            except InvalidParameterError as exc:
                raise InvalidParameterError(
                    f"group {name!r} names {feature!r}, which is not a feature of X "
                    f"(features: {list(feature_names)}): {exc}") from None
            if owner[j] >= 0:
                first = list(groups)[owner[j]]
                where = "twice" if first == name else f"in groups {first!r} and {name!r}"
                raise InvalidParameterError(
                    f"feature {feature_names[j]!r} is named {where}; a feature belongs to one "
                    "group at most.")
            owner[j] = g
    names_of = list(groups)
    players: list = []   # (first column, name, columns)
    for g, name in enumerate(names_of):
        cols = np.flatnonzero(owner == g)
        players.append((int(cols[0]), name, cols))
    for col in np.flatnonzero(owner < 0):
        players.append((int(col), feature_names[col], np.array([col])))
    players.sort(key=lambda p: p[0])
    seen: dict = {}
    for _, name, cols in players:
        if name in seen:
            raise InvalidParameterError(
                f"group name {name!r} is also the name of a feature outside the group; "
                "rename the group.")
        seen[name] = cols
    members = np.zeros((len(players), d), dtype=bool)
    for g, (_, _, cols) in enumerate(players):
        members[g, cols] = True
    return Players([p[1] for p in players], members, list(feature_names))


class GroupGame(Game):
    """A game whose players are groups of the players of ``game``.

    Parameters
    ----------
    game : Game
        A game that offers coalition rows (a table and its background).
    players : Players
    """

    def __init__(self, game, players: Players):
        self.inner, self.players = game, players
        #: what selects this game's output in a stacked result (tree games of several outputs)
        self.label = getattr(game, "label", None)
        self.model = game.model
        self.value_function = game.value_function
        self.n_explained, self.n_players = game.n_explained, len(players)
        self.background = getattr(game, "background", None)
        sub = game.subject
        members = players.members
        single = members.sum(axis=1) == 1
        first = members.argmax(axis=1)
        # a group of several features has no one value to show: NaN, a numeric column
        codes = np.where(single[None, :], sub.codes[:, first], np.nan)
        columns = [sub.columns[j] if one and sub.columns is not None
                   else Column(name, "numeric")
                   for name, one, j in zip(players.names, single, first)]
        self.subject = Subject(codes=codes, feature_names=list(players.names),
                               output=sub.output, columns=columns, column_labels=None,
                               media=sub.media)
        self.diagnostics = {**game.diagnostics, "groups": dict(players.features)}

    def over(self, game) -> "GroupGame":
        """The same grouping of another game of the same features (another output)."""
        return GroupGame(game, self.players)

    def coalition_rows(self, masks, rows=None):
        masks = np.asarray(masks, dtype=bool)
        return self.inner.coalition_rows(masks.astype(np.int64) @ self.players.members > 0,
                                         rows)

    def null_players(self) -> np.ndarray:
        """A group is null when every feature in it is."""
        inner = self.inner.null_players()
        members = self.players.members
        return (inner.astype(np.int64) @ members.T.astype(np.int64)) == members.sum(axis=1)

    def end_segments(self):
        return self.inner.end_segments()

    def ends(self):
        return self.inner.ends()
