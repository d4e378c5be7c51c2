# circles.awk: the circles of a directed graph, for check-layers.sh and
# check-calls.sh (awk -f circles.awk -f PROGRAM). The program fills adj[u]
# (" v w ...": u's arrows), why[u SUBSEP v] (what makes the arrow) and
# order[1..nnodes] (the nodes with arrows), defines fault(msg), and calls
# circles(WHAT): each circle a depth-first walk meets is a fault
# "circle of WHAT: a -> b -> a (why the last arrow)".
function circles(what,   i) {
	for (i = 1; i <= nnodes; i++)
		if (!color[order[i]]) visit(order[i], what)
}
function visit(u, what,   n, i, v, parts, k, path) {
	color[u] = 1
	stack[++depth] = u
	n = split(adj[u], parts, " ")
	for (i = 1; i <= n; i++) {
		v = parts[i]
		if (color[v] == 1) {
			path = v
			for (k = depth; stack[k] != v; k--) ;
			for (; k < depth; k++) path = path " -> " stack[k + 1]
			path = path " -> " v
			fault("circle of " what ": " path " (" why[u SUBSEP v] ")")
		} else if (!color[v])
			visit(v, what)
	}
	depth--
	color[u] = 2
}
