"""rewind.ButcherTableau gives the C++ library's explicit Runge-Kutta methods as data: the
coefficients rewind.torch steps with are the ones the C++ engine steps with."""

import pytest

import rewind

Tableau = rewind.ButcherTableau


def test_the_shipped_methods_are_listed_and_valid():
    assert Tableau.names() == ["euler", "heun", "rk4", "rk38", "bs3", "dopri5", "tsit5"]
    for name in Tableau.names():
        tableau = Tableau.by_name(name)
        tableau.validate()
        assert tableau.name == name
        s = tableau.stages
        assert len(tableau.a) == s * s and len(tableau.b) == s and len(tableau.c) == s
        assert sum(tableau.b) == pytest.approx(1.0, abs=1e-15)
        for i in range(s):
            assert tableau.c[i] == pytest.approx(sum(tableau.a_at(i, j) for j in range(i)))


def test_rk4_is_the_classical_method_and_rk38_the_three_eighths_rule():
    rk4, rk38 = Tableau.by_name("rk4"), Tableau.by_name("rk38")
    assert rk4.b == [1 / 6, 1 / 3, 1 / 3, 1 / 6] and rk4.c == [0.0, 0.5, 0.5, 1.0]
    assert rk4.a_at(2, 1) == 0.5 and rk4.a_at(3, 2) == 1.0 and rk4.a_at(2, 0) == 0.0
    assert rk38.b == [1 / 8, 3 / 8, 3 / 8, 1 / 8]
    assert rk38.c == pytest.approx([0.0, 1 / 3, 2 / 3, 1.0], abs=1e-15)
    assert [rk38.a_at(3, j) for j in range(3)] == [1.0, -1.0, 1.0]
    assert (rk4.order, rk38.order) == (4, 4)
    assert Tableau.by_name("kutta38").b == rk38.b
    assert Tableau.by_name("dopri5").fsal and Tableau.by_name("dopri5").embedded_order == 4


def test_a_coefficient_outside_a_is_refused():
    with pytest.raises(rewind.InvalidArgument, match=r"tableau 'rk4': a_at\(4, 0\) is outside A, "
                       r"whose indices lie in \[0, 4\)"):
        Tableau.by_name("rk4").a_at(4, 0)


def test_an_unknown_method_is_refused_with_the_list():
    with pytest.raises(rewind.InvalidArgument, match="unknown Runge-Kutta method 'rk5'; known: "
                       "euler, heun, rk4, rk38, bs3, dopri5, tsit5"):
        Tableau.by_name("rk5")


def test_the_package_imports_no_torch():
    import subprocess
    import sys

    code = "import sys, rewind; print('torch' in sys.modules, 'rewind.torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
