"""Distractor tools on plane and solid geometry, vectors and matrices."""

from __future__ import annotations

from toolsmith.evals.distractors.kit import Distractor, tool

G = "geometry"
M = "linear-algebra"
POINTS = ("points", "Vertices as [x, y] pairs, in order.")

TOOLS: tuple[Distractor, ...] = (
    tool(G, "circle_measures", "Area, circumference and diameter of a circle from its radius.",
         {"radius": ("number", "The radius.")},
         '''
         import math

         def run(radius):
             return {"area": round(math.pi * radius ** 2, 9), "circumference": round(2 * math.pi * radius, 9),
                     "diameter": 2 * radius}
         ''',
         {"radius": 2.5},
         ({"radius": 1}, {"area": 3.141592654, "circumference": 6.283185307, "diameter": 2})),
    tool(G, "polygon_area", "Area and perimeter of a simple polygon from its vertices (shoelace formula).",
         {"points": POINTS},
         '''
         import math

         def run(points):
             n = len(points)
             twice = sum(points[i][0] * points[(i + 1) % n][1] - points[(i + 1) % n][0] * points[i][1] for i in range(n))
             perimeter = sum(math.dist(points[i], points[(i + 1) % n]) for i in range(n))
             return {"area": abs(twice) / 2, "perimeter": round(perimeter, 9), "clockwise": twice < 0}
         ''',
         {"points": [[0, 0], [4, 0], [4, 3], [0, 3]]},
         ({"points": [[0, 0], [0, 2], [2, 0]]}, {"area": 2.0, "perimeter": 6.828427125, "clockwise": True})),
    tool(G, "triangle_from_sides", "Area (Heron's formula) and angles of a triangle from its three side lengths.",
         {"a": ("number", "Side a."), "b": ("number", "Side b."), "c": ("number", "Side c.")},
         '''
         import math

         def run(a, b, c):
             if a + b <= c or a + c <= b or b + c <= a:
                 raise ValueError("these sides do not make a triangle")
             s = (a + b + c) / 2
             area = math.sqrt(s * (s - a) * (s - b) * (s - c))

             def angle(opposite, x, y):
                 return round(math.degrees(math.acos((x * x + y * y - opposite * opposite) / (2 * x * y))), 6)

             return {"area": round(area, 9), "angles": [angle(a, b, c), angle(b, a, c), angle(c, a, b)]}
         ''',
         {"a": 7, "b": 8, "c": 9},
         ({"a": 3, "b": 4, "c": 5}, {"area": 6.0, "angles": [36.869898, 53.130102, 90.0]})),
    tool(G, "right_triangle", "Solve a right triangle from its two legs: hypotenuse, angles, area.",
         {"a": ("number", "First leg."), "b": ("number", "Second leg.")},
         '''
         import math

         def run(a, b):
             return {"hypotenuse": round(math.hypot(a, b), 9), "angle_a": round(math.degrees(math.atan2(a, b)), 6),
                     "angle_b": round(math.degrees(math.atan2(b, a)), 6), "area": a * b / 2}
         ''',
         {"a": 5, "b": 12},
         ({"a": 1, "b": 1}, {"hypotenuse": 1.414213562, "angle_a": 45.0, "angle_b": 45.0, "area": 0.5})),
    tool(G, "point_in_polygon", "Whether a point lies inside a polygon (ray casting).",
         {"point": ("numbers", "The point [x, y]."), "polygon": POINTS},
         '''
         def run(point, polygon):
             x, y = point
             inside = False
             n = len(polygon)
             for i in range(n):
                 (x1, y1), (x2, y2) = polygon[i], polygon[(i + 1) % n]
                 if (y1 > y) != (y2 > y) and x < (x2 - x1) * (y - y1) / (y2 - y1) + x1:
                     inside = not inside
             return {"inside": inside}
         ''',
         {"point": [2, 2], "polygon": [[0, 0], [5, 0], [5, 5], [0, 5]]},
         ({"point": [6, 1], "polygon": [[0, 0], [5, 0], [5, 5], [0, 5]]}, {"inside": False})),
    tool(G, "convex_hull", "The convex hull of a set of points, counter-clockwise (monotone chain).",
         {"points": ("points", "The points as [x, y] pairs.")},
         '''
         def run(points):
             pts = sorted(map(tuple, points))
             if len(pts) <= 2:
                 return {"hull": [list(p) for p in pts]}

             def cross(o, a, b):
                 return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

             def half(seq):
                 out = []
                 for p in seq:
                     while len(out) >= 2 and cross(out[-2], out[-1], p) <= 0:
                         out.pop()
                     out.append(p)
                 return out

             hull = half(pts)[:-1] + half(reversed(pts))[:-1]
             return {"hull": [list(p) for p in hull]}
         ''',
         {"points": [[0, 0], [1, 1], [2, 2], [2, 0], [0, 2], [1, 0.5]]},
         ({"points": [[0, 0], [1, 0], [0, 1], [0.2, 0.2]]}, {"hull": [[0, 0], [1, 0], [0, 1]]})),
    tool(G, "rectangle_overlap", "Intersection area and IoU of two axis-aligned rectangles [x1, y1, x2, y2].",
         {"first": ("numbers", "First rectangle."), "second": ("numbers", "Second rectangle.")},
         '''
         def run(first, second):
             w = min(first[2], second[2]) - max(first[0], second[0])
             h = min(first[3], second[3]) - max(first[1], second[1])
             inter = max(w, 0) * max(h, 0)
             area = lambda r: (r[2] - r[0]) * (r[3] - r[1])
             union = area(first) + area(second) - inter
             return {"intersection": inter, "iou": round(inter / union, 9) if union else 0.0}
         ''',
         {"first": [0, 0, 4, 4], "second": [2, 2, 6, 6]},
         ({"first": [0, 0, 1, 1], "second": [2, 2, 3, 3]}, {"intersection": 0, "iou": 0.0})),
    tool(G, "line_intersection", "Where two lines, each through two points, intersect.",
         {"first": ("points", "Two points on the first line."), "second": ("points", "Two points on the second line.")},
         '''
         def run(first, second):
             (x1, y1), (x2, y2) = first
             (x3, y3), (x4, y4) = second
             d = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4)
             if d == 0:
                 return {"intersects": False, "point": None}
             a, b = x1 * y2 - y1 * x2, x3 * y4 - y3 * x4
             return {"intersects": True, "point": [(a * (x3 - x4) - (x1 - x2) * b) / d, (a * (y3 - y4) - (y1 - y2) * b) / d]}
         ''',
         {"first": [[0, 0], [4, 4]], "second": [[0, 4], [4, 0]]},
         ({"first": [[0, 0], [1, 0]], "second": [[0, 1], [1, 1]]}, {"intersects": False, "point": None})),
    tool(G, "polygon_centroid", "The centroid (centre of mass) of a simple polygon.",
         {"points": POINTS},
         '''
         def run(points):
             n, a, cx, cy = len(points), 0.0, 0.0, 0.0
             for i in range(n):
                 (x0, y0), (x1, y1) = points[i], points[(i + 1) % n]
                 c = x0 * y1 - x1 * y0
                 a, cx, cy = a + c, cx + (x0 + x1) * c, cy + (y0 + y1) * c
             if a == 0:
                 raise ValueError("the polygon has no area")
             return {"centroid": [round(cx / (3 * a), 9), round(cy / (3 * a), 9)]}
         ''',
         {"points": [[0, 0], [6, 0], [6, 2], [0, 2]]},
         ({"points": [[0, 0], [3, 0], [0, 3]]}, {"centroid": [1.0, 1.0]})),
    tool(G, "rotate_point", "Rotate a point about a centre by an angle in degrees (counter-clockwise).",
         {"point": ("numbers", "The point [x, y]."), "degrees": ("number", "The angle."),
          "center": ("numbers", "The centre [x, y].", [0, 0])},
         '''
         import math

         def run(point, degrees, center=(0, 0)):
             t = math.radians(degrees)
             dx, dy = point[0] - center[0], point[1] - center[1]
             x = center[0] + dx * math.cos(t) - dy * math.sin(t)
             y = center[1] + dx * math.sin(t) + dy * math.cos(t)
             return {"point": [round(x, 9), round(y, 9)]}
         ''',
         {"point": [3, 1], "degrees": 30, "center": [1, 1]},
         ({"point": [1, 0], "degrees": 90}, {"point": [0.0, 1.0]})),
    tool(G, "point_line_distance", "Distance from a point to a line segment, and the nearest point on it.",
         {"point": ("numbers", "The point [x, y]."), "segment": ("points", "The segment's two end points.")},
         '''
         import math

         def run(point, segment):
             (ax, ay), (bx, by) = segment
             px, py = point
             dx, dy = bx - ax, by - ay
             t = 0.0 if dx == dy == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
             near = [ax + t * dx, ay + t * dy]
             return {"distance": round(math.dist(point, near), 9), "nearest": near}
         ''',
         {"point": [3, 4], "segment": [[0, 0], [10, 0]]},
         ({"point": [-2, 0], "segment": [[0, 0], [1, 0]]}, {"distance": 2.0, "nearest": [0.0, 0.0]})),
    tool(G, "regular_polygon", "Area, perimeter, interior angle and circumradius of a regular polygon.",
         {"sides": ("integer", "Number of sides."), "length": ("number", "Side length.")},
         '''
         import math

         def run(sides, length):
             area = sides * length ** 2 / (4 * math.tan(math.pi / sides))
             return {"area": round(area, 9), "perimeter": sides * length,
                     "interior_angle": round(180 * (sides - 2) / sides, 9),
                     "circumradius": round(length / (2 * math.sin(math.pi / sides)), 9)}
         ''',
         {"sides": 6, "length": 2},
         ({"sides": 4, "length": 3}, {"area": 9.0, "perimeter": 12, "interior_angle": 90.0, "circumradius": 2.121320344})),
    tool(G, "sphere_measures", "Volume and surface area of a sphere from its radius.",
         {"radius": ("number", "The radius.")},
         '''
         import math

         def run(radius):
             return {"volume": round(4 / 3 * math.pi * radius ** 3, 9), "surface": round(4 * math.pi * radius ** 2, 9)}
         ''',
         {"radius": 6.5},
         ({"radius": 1}, {"volume": 4.188790205, "surface": 12.566370614})),
    tool(G, "cylinder_measures", "Volume, lateral and total surface area of a cylinder.",
         {"radius": ("number", "The radius."), "height": ("number", "The height.")},
         '''
         import math

         def run(radius, height):
             return {"volume": round(math.pi * radius ** 2 * height, 9),
                     "lateral": round(2 * math.pi * radius * height, 9),
                     "total": round(2 * math.pi * radius * (radius + height), 9)}
         ''',
         {"radius": 3, "height": 10},
         ({"radius": 1, "height": 1}, {"volume": 3.141592654, "lateral": 6.283185307, "total": 12.566370614})),
    tool(G, "cone_measures", "Volume, slant height and surface area of a right circular cone.",
         {"radius": ("number", "Base radius."), "height": ("number", "Height.")},
         '''
         import math

         def run(radius, height):
             slant = math.hypot(radius, height)
             return {"volume": round(math.pi * radius ** 2 * height / 3, 9), "slant": round(slant, 9),
                     "surface": round(math.pi * radius * (radius + slant), 9)}
         ''',
         {"radius": 4, "height": 9},
         ({"radius": 3, "height": 4}, {"volume": 37.699111843, "slant": 5.0, "surface": 75.398223686})),
    tool(G, "box_measures", "Volume, surface area and space diagonal of a rectangular box.",
         {"length": ("number", "Length."), "width": ("number", "Width."), "height": ("number", "Height.")},
         '''
         import math

         def run(length, width, height):
             return {"volume": length * width * height,
                     "surface": 2 * (length * width + width * height + length * height),
                     "diagonal": round(math.sqrt(length ** 2 + width ** 2 + height ** 2), 9)}
         ''',
         {"length": 2, "width": 3, "height": 6},
         ({"length": 1, "width": 2, "height": 2}, {"volume": 4, "surface": 16, "diagonal": 3.0})),
    tool(G, "bounding_box", "The axis-aligned bounding box of points: corners, width and height.",
         {"points": ("points", "The points as [x, y] pairs.")},
         '''
         def run(points):
             xs, ys = [p[0] for p in points], [p[1] for p in points]
             return {"min": [min(xs), min(ys)], "max": [max(xs), max(ys)], "width": max(xs) - min(xs),
                     "height": max(ys) - min(ys)}
         ''',
         {"points": [[1, 5], [3, -2], [-4, 0]]},
         ({"points": [[0, 0], [2, 1]]}, {"min": [0, 0], "max": [2, 1], "width": 2, "height": 1})),
    tool(G, "polar_cartesian", "Convert between polar (r, θ in degrees) and Cartesian (x, y) coordinates.",
         {"a": ("number", "x, or r when to_cartesian."), "b": ("number", "y, or θ when to_cartesian."),
          "to_cartesian": ("boolean", "Polar to Cartesian instead.", False)},
         '''
         import math

         def run(a, b, to_cartesian=False):
             if to_cartesian:
                 t = math.radians(b)
                 return {"x": round(a * math.cos(t), 9), "y": round(a * math.sin(t), 9)}
             return {"r": round(math.hypot(a, b), 9), "theta": round(math.degrees(math.atan2(b, a)), 9)}
         ''',
         {"a": 3, "b": 4},
         ({"a": 2, "b": 90, "to_cartesian": True}, {"x": 0.0, "y": 2.0})),
    tool(M, "vector_operations", "Dot product, cross product (3-D), norms and angle between two vectors.",
         {"u": ("numbers", "First vector."), "v": ("numbers", "Second vector.")},
         '''
         import math

         def run(u, v):
             dot = sum(a * b for a, b in zip(u, v))
             nu, nv = math.hypot(*u), math.hypot(*v)
             out = {"dot": dot, "norm_u": round(nu, 9), "norm_v": round(nv, 9),
                    "angle_degrees": round(math.degrees(math.acos(max(-1, min(1, dot / (nu * nv))))), 6)}
             if len(u) == len(v) == 3:
                 out["cross"] = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
             return out
         ''',
         {"u": [1, 2, 3], "v": [4, 5, 6]},
         ({"u": [1, 0, 0], "v": [0, 1, 0]}, {"dot": 0, "norm_u": 1.0, "norm_v": 1.0, "angle_degrees": 90.0,
                                               "cross": [0, 0, 1]})),
    tool(M, "matrix_multiply", "Multiply two matrices given as lists of rows.",
         {"a": ("list", "Left matrix (rows)."), "b": ("list", "Right matrix (rows).")},
         '''
         def run(a, b):
             if len(a[0]) != len(b):
                 raise ValueError("the inner dimensions differ")
             return {"product": [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]}
         ''',
         {"a": [[1, 2], [3, 4]], "b": [[5, 6], [7, 8]]},
         ({"a": [[1, 0, 2]], "b": [[1], [2], [3]]}, {"product": [[7]]})),
    tool(M, "matrix_determinant", "The determinant of a square matrix (exact for integers and fractions).",
         {"matrix": ("list", "Square matrix as rows.")},
         '''
         from fractions import Fraction

         def run(matrix):
             m = [[Fraction(x) for x in row] for row in matrix]
             n, det = len(m), Fraction(1)
             for c in range(n):
                 pivot = next((r for r in range(c, n) if m[r][c] != 0), None)
                 if pivot is None:
                     return {"determinant": 0}
                 if pivot != c:
                     m[c], m[pivot], det = m[pivot], m[c], -det
                 det *= m[c][c]
                 for r in range(c + 1, n):
                     f = m[r][c] / m[c][c]
                     m[r] = [x - f * y for x, y in zip(m[r], m[c])]
             return {"determinant": float(det) if det.denominator != 1 else int(det)}
         ''',
         {"matrix": [[2, -3, 1], [2, 0, -1], [1, 4, 5]]},
         ({"matrix": [[1, 2], [3, 4]]}, {"determinant": -2})),
    tool(M, "matrix_inverse", "The inverse of a square matrix, as exact fractions (text) and decimals.",
         {"matrix": ("list", "Square matrix as rows.")},
         '''
         from fractions import Fraction

         def run(matrix):
             n = len(matrix)
             m = [[Fraction(x) for x in row] + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(matrix)]
             for c in range(n):
                 pivot = next((r for r in range(c, n) if m[r][c] != 0), None)
                 if pivot is None:
                     raise ValueError("the matrix is singular")
                 m[c], m[pivot] = m[pivot], m[c]
                 m[c] = [x / m[c][c] for x in m[c]]
                 for r in range(n):
                     if r != c:
                         m[r] = [x - m[r][c] * y for x, y in zip(m[r], m[c])]
             inv = [row[n:] for row in m]
             return {"exact": [[str(x) for x in row] for row in inv], "decimal": [[float(x) for x in row] for row in inv]}
         ''',
         {"matrix": [[4, 7], [2, 6]]},
         ({"matrix": [[2, 0], [0, 4]]}, {"exact": [["1/2", "0"], ["0", "1/4"]], "decimal": [[0.5, 0.0], [0.0, 0.25]]})),
    tool(M, "solve_linear_system", "Solve a square system of linear equations A·x = b.",
         {"a": ("list", "Coefficient matrix as rows."), "b": ("numbers", "Right-hand side.")},
         '''
         from fractions import Fraction

         def run(a, b):
             n = len(a)
             m = [[Fraction(x) for x in row] + [Fraction(v)] for row, v in zip(a, b)]
             for c in range(n):
                 pivot = next((r for r in range(c, n) if m[r][c] != 0), None)
                 if pivot is None:
                     raise ValueError("the system has no unique solution")
                 m[c], m[pivot] = m[pivot], m[c]
                 m[c] = [x / m[c][c] for x in m[c]]
                 for r in range(n):
                     if r != c:
                         m[r] = [x - m[r][c] * y for x, y in zip(m[r], m[c])]
             return {"x": [float(row[n]) for row in m]}
         ''',
         {"a": [[2, 1, -1], [-3, -1, 2], [-2, 1, 2]], "b": [8, -11, -3]},
         ({"a": [[1, 1], [1, -1]], "b": [3, 1]}, {"x": [2.0, 1.0]})),
    tool(M, "matrix_transpose_trace", "Transpose and trace of a matrix, and whether it is symmetric.",
         {"matrix": ("list", "Matrix as rows.")},
         '''
         def run(matrix):
             t = [list(col) for col in zip(*matrix)]
             square = len(matrix) == len(matrix[0])
             return {"transpose": t, "trace": sum(matrix[i][i] for i in range(len(matrix))) if square else None,
                     "symmetric": square and t == [list(r) for r in matrix]}
         ''',
         {"matrix": [[1, 2, 3], [4, 5, 6]]},
         ({"matrix": [[1, 2], [2, 1]]}, {"transpose": [[1, 2], [2, 1]], "trace": 2, "symmetric": True})),
    tool(M, "matrix_power", "Raise a square integer matrix to a non-negative power.",
         {"matrix": ("list", "Square matrix as rows."), "power": ("integer", "The exponent.")},
         '''
         def run(matrix, power):
             n = len(matrix)
             result = [[int(i == j) for j in range(n)] for i in range(n)]
             base = [list(r) for r in matrix]

             def mul(x, y):
                 return [[sum(a * b for a, b in zip(row, col)) for col in zip(*y)] for row in x]

             while power:
                 if power & 1:
                     result = mul(result, base)
                 base, power = mul(base, base), power >> 1
             return {"matrix": result}
         ''',
         {"matrix": [[1, 1], [1, 0]], "power": 30},
         ({"matrix": [[2, 0], [0, 3]], "power": 2}, {"matrix": [[4, 0], [0, 9]]})),
    tool(M, "eigen_2x2", "Eigenvalues of a 2×2 matrix (real or complex, as [re, im] pairs).",
         {"matrix": ("list", "A 2×2 matrix as rows.")},
         '''
         import cmath

         def run(matrix):
             (a, b), (c, d) = matrix
             tr, det = a + d, a * d - b * c
             root = cmath.sqrt(tr * tr / 4 - det)
             values = [tr / 2 + root, tr / 2 - root]
             return {"eigenvalues": [[round(v.real, 9), round(v.imag, 9)] for v in values], "trace": tr, "determinant": det}
         ''',
         {"matrix": [[4, 1], [2, 3]]},
         ({"matrix": [[2, 0], [0, 1]]}, {"eigenvalues": [[2.0, 0.0], [1.0, 0.0]], "trace": 3, "determinant": 2})),
    tool(G, "triangle_centers", "Centroid, circumcentre and incentre of a triangle from its vertices.",
         {"points": ("points", "The three vertices as [x, y].")},
         '''
         import math

         def run(points):
             (ax, ay), (bx, by), (cx, cy) = points
             d = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
             if d == 0:
                 raise ValueError("the points are collinear")
             ux = ((ax * ax + ay * ay) * (by - cy) + (bx * bx + by * by) * (cy - ay) + (cx * cx + cy * cy) * (ay - by)) / d
             uy = ((ax * ax + ay * ay) * (cx - bx) + (bx * bx + by * by) * (ax - cx) + (cx * cx + cy * cy) * (bx - ax)) / d
             a, b, c = math.dist((bx, by), (cx, cy)), math.dist((ax, ay), (cx, cy)), math.dist((ax, ay), (bx, by))
             p = a + b + c
             return {"centroid": [round((ax + bx + cx) / 3, 9), round((ay + by + cy) / 3, 9)],
                     "circumcenter": [round(ux, 9), round(uy, 9)],
                     "incenter": [round((a * ax + b * bx + c * cx) / p, 9), round((a * ay + b * by + c * cy) / p, 9)]}
         ''',
         {"points": [[0, 0], [4, 0], [0, 3]]},
         ({"points": [[0, 0], [2, 0], [0, 2]]}, {"centroid": [0.666666667, 0.666666667], "circumcenter": [1.0, 1.0],
                                                  "incenter": [0.585786438, 0.585786438]})),
)  # fmt: skip
