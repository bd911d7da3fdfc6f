"""Zener's ball on an infinite plate (Zener 1941, "The intrinsic
inelasticity of large plates"), for tools/zener_plate.sh and
tools/plots/convergence.py: Hertz's contact F = k δ^{3/2} against
Kirchhoff's plate, whose point moves at F / 8√(Dρh). In units of
α₀ = v t₀, t₀ = (m / k√v)^{2/5}, the indentation obeys
s'' + λ (s^{3/2})' + s^{3/2} = 0, s(0) = 0, s'(0) = 1, with the one
parameter λ = k^{2/5} m^{3/5} v^{1/5} / 8√(Dρh)."""

import math

# The plate of the checks: soda-lime-glass (configs/materials.toml), 4 mm;
# the ball: steel.
PLATE_E, PLATE_NU, PLATE_RHO, PLATE_H = 72e9, 0.22, 2500.0, 0.004
BALL_E, BALL_NU, BALL_RHO = 200e9, 0.3, 7850.0


def ball(radius_m, speed_m_s=1.0):
    """A steel ball on the plate: (mass, λ, force unit k α₀^{3/2}, time unit t₀)."""
    e_star = 1 / ((1 - BALL_NU**2) / BALL_E + (1 - PLATE_NU**2) / PLATE_E)
    impedance = 8 * math.sqrt(PLATE_E * PLATE_H**3 / (12 * (1 - PLATE_NU**2)) * PLATE_RHO * PLATE_H)
    mass = BALL_RHO * 4 / 3 * math.pi * radius_m**3
    k = 4 / 3 * e_star * math.sqrt(radius_m)
    lam = k**0.4 * mass**0.6 * speed_m_s**0.2 / impedance
    t0 = (mass / (k * math.sqrt(speed_m_s))) ** 0.4
    return mass, lam, k * (speed_m_s * t0) ** 1.5, t0


def zener(lam, dt=1e-4):
    """Rebound over approach speed, peak force and contact time (in the
    units of `ball`), by RK4 in the ball's velocity u = s' + λ s^{3/2}."""
    f = lambda s, u: (u - lam * max(s, 0) ** 1.5, -max(s, 0) ** 1.5)  # noqa: E731
    s, u, peak, t = 0.0, 1.0, 0.0, 0.0
    while True:
        k1 = f(s, u)
        k2 = f(s + dt / 2 * k1[0], u + dt / 2 * k1[1])
        k3 = f(s + dt / 2 * k2[0], u + dt / 2 * k2[1])
        k4 = f(s + dt * k3[0], u + dt * k3[1])
        s += dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        u += dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        t += dt
        if s <= 0:
            return -u, peak, t
        peak = max(peak, s**1.5)
