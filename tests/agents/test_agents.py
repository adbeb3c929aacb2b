"""Agents: the random baseline, the policy registry, and the blood-battle heuristic.

Decision tests build a table on a scripted wall (``scripted_wall`` + ``BloodBattleGame``) and
hand the policy exactly what the env would: the seat's observation and its action mask.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents import RandomPolicy, load_policy, policy_names
from agents.features import HandEval, decode
from agents.heuristic import HeuristicPolicy
from mjenv import blood_battle_v0, tiles
from mjenv.actions import BLOOD_BATTLE as L
from mjenv.config import blood_battle_rules
from mjenv.encoding import BloodBattleObserver
from mjenv.engine.blood_battle import SUIT_TILES, BloodBattleGame, scripted_wall
from mjenv.games import GAME_NAMES
from mjenv.rules import shapes

PRESETS = ["happy", "qq"]
OBSERVER = BloodBattleObserver(bean_scale=192)


def T(tile: str) -> int:
    return tiles.parse_tile(tile)


def D(tile: str) -> int:
    """Discard ``tile``."""
    return L.DISCARD + T(tile)


def game(hands: list[str | None], draws: str = "", tail: str = "", preset: str = "happy") -> BloodBattleGame:
    """A hand on a scripted wall, seat 0 dealing; ``None`` hands are filled by :func:`bystander`."""
    used = [k for h in hands if h for k in tiles.parse(h)] + tiles.parse(draws) + tiles.parse(tail)
    left = list(SUIT_TILES)
    for k in used:
        left.remove(k)
    full = []
    for h in hands:
        if h is None:
            h = bystander(left)
        full.append(h)
    return BloodBattleGame(blood_battle_rules(preset), scripted_wall(full, draws, tail), 0, auto_forced=False)


def bystander(left: list[int]) -> str:
    """13 tiles taken from ``left`` for a seat that only sits there: 条 first (its void, so it can
    never win), then 万/筒 of distinct kinds (so it can never 碰)."""
    picked = [k for k in left if k >= 18][:13]
    for k in sorted(set(left)):
        if len(picked) < 13 and k < 18:
            picked.append(k)
    for k in picked:
        left.remove(k)
    return tiles.fmt(picked)


def decide(policy, g: BloodBattleGame, rng: np.random.Generator | None = None) -> int:
    """The policy's action for the seat to play, from its observation and mask only."""
    obs = OBSERVER.observe(g, g.current_player)
    return policy.act(obs, g.legal_mask().copy(), rng or np.random.default_rng(0))


def play(g: BloodBattleGame, script: list[tuple[int, int]]) -> None:
    """Play ``(seat, action)`` steps, checking the seat asked."""
    for seat, action in script:
        assert g.current_player == seat, (seat, g.current_player, g.phase)
        g.apply(action)


def voids(g: BloodBattleGame, suits: str = "ssss") -> None:
    """Every seat chooses its void (seat 0 deals, so seats choose in order 0-3)."""
    play(g, [(s, L.VOID + tiles.SUITS.index(suits[s])) for s in range(4)])


# A dealer that only draws and discards: 万/筒 only (so no void tile to shed first), not ready.
DEALER = "124679m1235689p"


# ---------------------------------------------------------------------------- random policy


def test_random_act_is_uniform_over_the_mask_and_legal():
    mask = np.zeros(L.n, dtype=np.int8)
    legal = [3, 17, L.PONG, L.PASS, L.VOID + 1]
    mask[legal] = 1
    rng = np.random.default_rng(0)
    policy = RandomPolicy()
    n = 20_000
    picks = np.array([policy.act(np.zeros((68, 27), np.float32), mask, rng) for _ in range(n)])
    assert set(np.unique(picks)) == set(legal)
    counts = np.bincount(picks, minlength=L.n)[legal]
    # Binomial sd = sqrt(n p (1-p)) ~ 57; 5 sd either side of n/5.
    assert np.all(np.abs(counts - n / len(legal)) < 5 * np.sqrt(n * 0.2 * 0.8))


def test_random_act_batch_is_uniform_per_row_and_legal():
    rng = np.random.default_rng(1)
    masks = (rng.random((4000, L.n)) < 0.1).astype(np.int8)
    masks[:, L.PASS] = 1  # every row has a legal action
    actions = RandomPolicy().act_batch(np.zeros((4000, 68, 27), np.float32), masks, rng)
    assert actions.shape == (4000,)
    assert masks[np.arange(4000), actions].all()
    # A fixed mask repeated: each legal action close to 1/k of the rows.
    mask = np.zeros(L.n, dtype=np.int8)
    mask[[0, 5, 58]] = 1
    rows = RandomPolicy().act_batch(np.zeros((9000, 68, 27), np.float32), np.tile(mask, (9000, 1)), rng)
    counts = np.bincount(rows, minlength=L.n)
    assert set(np.flatnonzero(counts)) == {0, 5, 58}
    assert np.all(np.abs(counts[[0, 5, 58]] - 3000) < 5 * np.sqrt(9000 * 2 / 9))


def test_random_rejects_an_empty_mask():
    with pytest.raises(ValueError, match="no legal action"):
        RandomPolicy().act(np.zeros((68, 27)), np.zeros(L.n, np.int8), np.random.default_rng(0))
    with pytest.raises(ValueError, match="no legal action"):
        RandomPolicy().act_batch(np.zeros((2, 68, 27)), np.zeros((2, L.n), np.int8), np.random.default_rng(0))


# ---------------------------------------------------------------------------- registry


def test_load_policy_by_name():
    assert {"random", "heuristic"} <= set(policy_names())
    assert isinstance(load_policy("random"), RandomPolicy)
    h = load_policy("heuristic")
    assert isinstance(h, HeuristicPolicy) and h.name == "heuristic"


SHIPPED = {"blood_battle_happy": ("blood_battle", {"preset": "happy"}),
           "blood_battle_qq": ("blood_battle", {"preset": "qq"}),
           "joy_mahjong_popular": ("joy_mahjong", {"room": "popular"}),
           "joy_mahjong_eight_fan": ("joy_mahjong", {"room": "eight_fan"})}


def _env_of(game: str, options: dict):
    from mjenv import joy_mahjong_v0

    return (blood_battle_v0 if game == "blood_battle" else joy_mahjong_v0).raw_env(**options)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_policy_loads_by_name_and_path_and_plays_legal_hands(name):
    from agents.registry import SHIPPED_CHECKPOINTS

    game, options = SHIPPED[name]
    path = SHIPPED_CHECKPOINTS[name]
    assert path.is_file() and path.stat().st_size <= 5_000_000  # shipped in the repository, small
    by_name, by_path = load_policy(name, game=game), load_policy(path)
    assert by_name.name == name and name in policy_names()
    env, rng = _env_of(game, options), np.random.default_rng(0)
    for seed in range(2):
        env.reset(seed=seed)
        while not env.game.over:
            o = env.observe(env.agent_selection)
            a = by_name.act(o["observation"], o["action_mask"], rng)
            assert o["action_mask"][a] == 1
            assert a == by_path.act(o["observation"], o["action_mask"], rng)  # the same greedy network
            env.step(a)


def test_ppo_names_each_games_default_shipped_policy_and_names_check_the_game():
    from agents.registry import SHIPPED_CHECKPOINTS, SHIPPED_DEFAULT

    assert set(SHIPPED_DEFAULT.values()) <= set(SHIPPED_CHECKPOINTS)
    for game in GAME_NAMES:
        ppo = load_policy("ppo", game=game)
        assert ppo.name == "ppo" and ppo.net.arch["game"] == game
    with pytest.raises(ValueError, match="no trained policy is shipped"):
        load_policy("ppo", game="no_such_game")
    with pytest.raises(ValueError, match="plays joy_mahjong, not 'blood_battle'"):
        load_policy("joy_mahjong_popular", game="blood_battle")


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_policy_is_trained_it_beats_three_random_agents(name):
    from agents.arena import run_arena

    # 40 duplicate hands; the 4,000-hand figures are about +30 (docs/baselines.md), an untrained net loses
    game, options = SHIPPED[name]
    me = run_arena(game=game, agents=[name, "random"], deals=10, seed=7, env_options=options,
                   progress=False).stats()[name]
    assert me["ci_low"] > 5  # beans, not wins: the happy policy wins fewer, larger hands than the heuristic


def test_load_policy_by_object_and_callable():
    p = RandomPolicy()
    assert load_policy(p) is p

    def always_pass(observation, action_mask, rng):
        return L.PASS

    wrapped = load_policy(always_pass)
    assert wrapped.name == "always_pass"
    mask = np.ones((3, L.n), np.int8)
    rng = np.random.default_rng(0)
    assert wrapped.act(np.zeros((68, 27)), mask[0], rng) == L.PASS
    assert wrapped.act_batch(np.zeros((3, 68, 27)), mask, rng).tolist() == [L.PASS] * 3


def test_load_policy_imports_module_colon_class():
    policy = load_policy("agents.base:RandomPolicy")
    assert isinstance(policy, RandomPolicy)
    with pytest.raises(ValueError, match="cannot import module 'agents.no_such_module'"):
        load_policy("agents.no_such_module:Policy")
    with pytest.raises(ValueError, match="has no 'NoSuchPolicy'"):
        load_policy("agents.base:NoSuchPolicy")
    with pytest.raises(ValueError, match="is not a policy"):
        load_policy("json:JSONDecoder")


def test_load_policy_rejects_unknown_names_and_types():
    with pytest.raises(ValueError, match="unknown policy 'nope'.*heuristic"):
        load_policy("nope")
    with pytest.raises(TypeError, match="int"):
        load_policy(3)


def test_heuristic_is_picked_per_game_and_rejects_an_unknown_one():
    from agents.heuristic_joy import JoyHeuristicPolicy

    assert isinstance(load_policy("heuristic", game="joy_mahjong"), JoyHeuristicPolicy)
    assert isinstance(load_policy("heuristic", game="blood_battle"), HeuristicPolicy)
    with pytest.raises(ValueError, match="riichi"):
        load_policy("heuristic", game="riichi")
    with pytest.raises(ValueError, match="joy_mahjong"):
        HeuristicPolicy("joy_mahjong")


# ---------------------------------------------------------------------------- decoding


def test_decode_matches_the_game():
    """What the heuristic decodes equals the game's public facts (checked against the engine)."""
    e = blood_battle_v0.raw_env()
    rng = np.random.default_rng(7)
    policy = HeuristicPolicy()
    checked = 0
    for seed in range(6):
        e.reset(seed=seed)
        while not e.game.over:
            g = e.game
            seat = g.current_player
            obs = e.observe(e.agent_selection)
            v = decode(obs["observation"])
            assert v.hand == list(g.hands[seat][:27])
            assert v.phase == g.phase and v.wall == g.wall_count
            assert v.claim == (g.claim_tile if g.phase in ("claim", "rob") else -1)
            assert v.drawn == (g.drawn if g.phase == "turn" and g.drawn is not None else -1)
            order = [(seat + r) % 4 for r in range(4)]
            assert v.won == [g.won[s] for s in order]
            revealed = g.phase != "void"
            assert v.void == [g.void[s] if (s == seat or revealed) else -1 for s in order]
            assert v.pongs == [sorted(m.tile for m in g.melds[s] if m.kind == "pong") for s in order]
            assert v.kongs == [sorted(m.tile for m in g.melds[s] if m.kind in ("kong", "addkong"))
                               for s in order]
            assert v.own_ankan == sorted(m.tile for m in g.melds[seat] if m.kind == "ankan")
            assert v.rivers == [g.river_counts[s, :27].tolist() for s in order]
            seen = list(g.hands[seat][:27])
            for s in range(4):
                for k in g.rivers[s]:
                    seen[k] += 1
                for m in g.melds[s]:
                    if m.kind != "ankan" or s == seat:
                        for k in m.kinds():
                            seen[k] += 1
            for w in g.wins:
                seen[w.tile] += 1
            assert v.visible == seen
            checked += 1
            e.step(policy.act(obs["observation"], obs["action_mask"], rng))
    assert checked > 250


def test_hand_eval_agrees_with_shapes():
    """Shanten and useful tiles equal a brute force over ``shapes.shanten``."""
    rng = np.random.default_rng(3)
    pool = [k for k in SUIT_TILES if k < 18]  # 万 and 筒: void 条
    for _ in range(300):
        n_melds = int(rng.integers(0, 3))
        n = 3 * (4 - n_melds) + 1
        c = [0] * 34
        for k in rng.choice(pool, n, replace=False):
            c[k] += 1
        ev = HandEval(c[:27], 2, n_melds)
        s = shapes.shanten(c, n_melds)
        assert ev.shanten == s
        ref = []
        for t in range(18):
            if c[t] < 4:
                c[t] += 1
                if shapes.shanten(c, n_melds) < s:
                    ref.append(t)
                c[t] -= 1
        assert ev.useful() == ref


# ---------------------------------------------------------------------------- heuristic: legality


@pytest.mark.parametrize("preset", PRESETS)
def test_heuristic_never_plays_an_illegal_action(preset):
    e = blood_battle_v0.env(preset=preset)
    policy = load_policy("heuristic")
    rng = np.random.default_rng(0)
    wins = 0
    for seed in range(200):
        e.reset(seed=seed)
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            a = policy.act(obs["observation"], obs["action_mask"], rng)
            assert obs["action_mask"][a] == 1, (seed, agent, e.unwrapped.action_name(a))
            e.step(a)  # the env raises on an illegal action too
        wins += len(e.unwrapped.game.wins)
    assert wins > 200  # four heuristic seats do win hands


def test_heuristic_act_batch_matches_act():
    e = blood_battle_v0.raw_env()
    e.reset(seed=4)
    rng = np.random.default_rng(0)
    policy = HeuristicPolicy()
    obs, masks = [], []
    while not e.game.over and len(obs) < 60:
        o = e.observe(e.agent_selection)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        e.step(policy.act(o["observation"], o["action_mask"], rng))
    batch = policy.act_batch(np.stack(obs), np.stack(masks), rng)
    assert batch.tolist() == [policy.act(o, m, rng) for o, m in zip(obs, masks)]


# ---------------------------------------------------------------------------- heuristic: decisions

H = HeuristicPolicy()


@pytest.mark.parametrize("hand,void", [
    ("1234567m11223p9s", "s"),  # fewest tiles: one 条
    ("159m123p1234567s", "m"),  # three 万 or three 筒: the 筒 are a set, give up the loose 万
])
def test_chooses_the_cheapest_void(hand, void):
    g = game([hand, None, None, None], draws="9p")
    assert decide(H, g) == L.VOID + tiles.SUITS.index(void)


def test_discards_the_void_suit_first():
    """The dealer chose 筒 void and holds two 筒: it sheds one of those, nothing else."""
    g = game(["123456789m11s59p", None, None, None], draws="5s")
    play(g, [(0, L.VOID + 1), (1, L.VOID + 2), (2, L.VOID + 2), (3, L.VOID + 2)])
    a = decide(H, g)
    assert a in (D("5p"), D("9p"))


def test_discards_the_lone_tile():
    """123456789m 11p 34p + a lone 9p: dropping 9p leaves a ready hand, anything else does not."""
    g = game(["123456789m11p34p", None, None, None], draws="9p")
    voids(g)
    assert decide(H, g) == D("9p")


def test_prefers_the_discard_that_leaves_more_useful_tiles():
    """Property over random 万/筒 hands: the first discard has the lowest shanten and, among those,
    the most unseen useful tiles (a brute force over ``shapes.shanten``). Hands where seven pairs
    competes are left out: its draws are weighted up on purpose."""
    rng = np.random.default_rng(11)
    rules = blood_battle_rules("happy")
    pool = [k for k in SUIT_TILES if k < 18]
    checked = 0
    while checked < 40:
        picks = rng.choice(len(pool), 14, replace=False)
        mine = sorted(pool[i] for i in picks)
        per_suit = [sum(1 for k in mine if k // 9 == s) for s in range(2)]
        if max(per_suit) >= 10:  # near 清一色 steering is a different rule
            continue
        rest = list(SUIT_TILES)
        for k in mine:
            rest.remove(k)
        rest = [rest[i] for i in rng.permutation(len(rest))]
        wall = mine[:13] + rest[:39] + [mine[13]] + rest[39:]
        g = BloodBattleGame(rules, wall, 0, auto_forced=False)
        voids(g)
        c = list(g.hands[0])
        best = shapes.shanten(c)
        if best < 1:  # ready hands weight waits by value: tested elsewhere
            continue
        rows = {}
        seven_pairs = False
        for k in set(mine):
            c[k] -= 1
            s = shapes.shanten(c)
            seven_pairs |= shapes.seven_pairs_shanten(c) <= shapes.regular_shanten(c)
            useful = 0
            for t in range(18):
                if c[t] < 4:
                    c[t] += 1
                    useful += (4 - g.hands[0][t]) if shapes.shanten(c) < s else 0
                    c[t] -= 1
            rows[k] = (s, -useful)
            c[k] += 1
        if seven_pairs:
            continue
        a = decide(H, g)
        assert rows[a - L.DISCARD] == min(rows.values()), (tiles.fmt(mine), rows)
        checked += 1


def test_takes_a_self_drawn_win():
    g = game(["123m456m789p234p1p", None, None, None], draws="1p")
    voids(g)
    assert g.legal_mask()[L.HU] and decide(H, g) == L.HU


def test_takes_a_win_on_a_discard():
    g = game([DEALER, "123m456m789p234p1p", None, None], draws="4p")
    voids(g)
    play(g, [(0, D("4p"))])
    assert g.current_player == 1 and decide(H, g) == L.HU


def test_does_not_pass_a_rob_kong():
    """Seat 1 adds the 4th 5m to its 碰; seat 2 waits on 5m and robs it."""
    hands = ["123446799m4567p", "55m1s13699m44557p", "46m123p456p789p11p", None]
    g = game(hands, draws="5m 2s 3s 4s 5m", tail="6s")
    voids(g)
    play(g, [(0, D("5m")), (1, L.PONG), (2, L.PASS), (1, D("1s")), (2, D("2s")), (3, D("3s")),
             (0, D("4s")), (1, L.KONG + T("5m"))])
    assert g.phase == "rob" and g.current_player == 2
    assert decide(H, g) == L.ROB_KONG


@pytest.mark.parametrize("hand,why", [
    ("123345m678m99p45p", "ready with 3m in two chows: 碰 3m leaves it 1-shanten"),
    ("33m77m99m22p55p14m4p", "five pairs toward 七对: 碰 3m kills it"),
])
def test_declines_a_pong_that_breaks_a_better_hand(hand, why):
    g = game([DEALER, hand, None, None], draws="3m")
    voids(g)
    play(g, [(0, D("3m"))])
    assert g.current_player == 1 and g.legal_mask()[L.PONG]
    assert decide(H, g) == L.PASS, why


def test_pongs_when_it_advances_the_hand():
    """55m 123m 456p 789p 2p 8p is 1-shanten; 碰 5m makes it ready (tanki after a discard)."""
    g = game([DEALER, "55m123m456p789p2p8p", None, None], draws="5m")
    voids(g)
    play(g, [(0, D("5m"))])
    assert g.current_player == 1 and decide(H, g) == L.PONG


def test_kongs_a_discard_when_it_costs_nothing():
    """555m 123p 456p 789p 9m waits on 9m; the 直杠 keeps it ready and earns the kong."""
    g = game([DEALER, "555m123p456p789p9m", None, None], draws="5m")
    voids(g)
    play(g, [(0, D("5m"))])
    assert g.legal_mask()[L.DIRECT_KONG] and decide(H, g) == L.DIRECT_KONG


def test_near_flush_sheds_the_other_suit():
    """Eleven 万 and 123p: a 万 discard keeps 1-shanten, a 筒 one is 2-shanten, but within one
    step of a 清一色 (3 fan against 1) the 筒 go."""
    g = game(["1245567789m123p", None, None, None], draws="9m")
    voids(g)
    assert shapes.shanten(g.hands[0]) == 1
    assert tiles.suit_of(decide(H, g) - L.DISCARD) == 1


def test_ready_hand_is_not_broken_for_a_flush():
    """Eleven 万 + 123p, ready after dropping 8m or 9m: the 清一色 steering does not break it."""
    g = game(["11345567899m12p", None, None, None], draws="3p")
    voids(g)
    a = decide(H, g)
    c = list(g.hands[0])
    c[a - L.DISCARD] -= 1
    assert shapes.shanten(c) == 0, tiles.name(a - L.DISCARD)


def test_keeps_the_pairs_of_a_seven_pairs_hand():
    """Five pairs and four lone 筒, no melds: the 七对 shanten decides, so a lone tile goes."""
    g = game(["1133557799m246p", None, None, None], draws="8p")
    voids(g)
    assert decide(H, g) in {D(t) for t in ("2p", "4p", "6p", "8p")}


def test_defence_prefers_the_threat_s_own_discard():
    """Two equal tanki choices, 1m or 9m, each with two unseen copies. 下家 (two 碰 shown) has
    discarded 9m and 对家 1m: the tile already safe against the threat goes. The observation is
    edited by hand (the policy reads nothing else): the threat's melds, rivers and void."""
    g = game(["19m456m234p678p55p", None, None, None], draws="5p")
    voids(g)
    obs = OBSERVER.observe(g, 0)
    v = BloodBattleObserver.views
    obs[v["pong"].start + 1, [T("2s"), T("5s")]] = 1  # 下家 shows two 碰
    obs[v["void"].start + 1] = 0
    obs[v["void"].start + 1, 9:18] = 1  # ... and is void in 筒, so 万 can hurt
    obs[v["river"].start + 1, T("9m")] = 0.25  # 下家 let 9m go (现物)
    obs[v["river"].start + 2, T("1m")] = 0.25  # 对家 let 1m go: both tanki waits see 2 copies
    view = decode(obs)
    assert view.visible[T("1m")] == view.visible[T("9m")] == 2
    assert H.act(obs, g.legal_mask().copy(), np.random.default_rng(0)) == D("9m")
