-- Golden queries over fixture.json (two ProfilerSteps on thread "main", nested outer > inner >
-- leaf, k1 on "worker", a "mem" counter, one flow from outer to k1). Each case: a title line,
-- the SQL, "-- expect", the rows as CSV with a header, "-- end". Times: fixture µs x 1000.

-- slices by name
SELECT name, count(*), sum(dur) FROM slice GROUP BY name ORDER BY name
-- expect
name,count(*),sum(dur)
ProfilerStep#1,1,150000
ProfilerStep#2,1,150000
inner,2,40000
k1,1,10000
leaf,1,5000
outer,2,200000
-- end

-- parents by id (Perfetto's self-join)
SELECT s.name, p.name FROM slice s JOIN slice p ON p.id = s.parent_id ORDER BY s.ts
-- expect
name,name
outer,ProfilerStep#1
inner,outer
inner,outer
leaf,inner
outer,ProfilerStep#2
-- end

-- depth and a name pushed down
SELECT name, depth, dur FROM slice WHERE name = 'leaf'
-- expect
name,depth,dur
leaf,3,5000
-- end

-- a time window
SELECT name FROM slice WHERE ts >= 50000 AND ts < 160000 ORDER BY ts, depth
-- expect
name
inner
leaf
ProfilerStep#2
-- end

-- args flattened as Perfetto keys them; 64-bit integers as written (a real past int64)
SELECT key, int_value, string_value, real_value FROM slice JOIN args USING (profile_id, arg_set_id) WHERE slice.name = 'outer' AND slice.ts = 10000 ORDER BY key
-- expect
key,int_value,string_value,real_value
a,1,,
big,,,1.21907609172358e+19
id,-5507777931146067969,,
l[0],1,,
l[1],2,,
n.k,,,2.5
s,,x,
t,9007199254740993,,
-- end

-- counter samples on their track
SELECT t.name, c.ts, c.value FROM counter c JOIN track t ON t.id = c.track_id AND t.profile_id = c.profile_id ORDER BY c.ts
-- expect
name,ts,value
mem bytes,0,1
mem bytes,50000,2
mem bytes,100000,3
-- end

-- a flow's ends as slices
SELECT f.name, so.name, si.name FROM flow f JOIN slice so ON so.id = f.slice_out JOIN slice si ON si.id = f.slice_in
-- expect
name,name,name
handoff,outer,k1
-- end

-- threads
SELECT name FROM thread ORDER BY name
-- expect
name
main
worker
-- end

-- steps
SELECT id, name, ts, dur FROM step ORDER BY id
-- expect
id,name,ts,dur
0,ProfilerStep#1,0,150000
1,ProfilerStep#2,150000,150000
-- end

-- slices of a step (a join on a window)
SELECT st.name, count(*) FROM step st JOIN slice s ON s.ts >= st.ts AND s.ts < st.ts + st.dur AND s.depth > 0 GROUP BY st.id ORDER BY st.id
-- expect
name,count(*)
ProfilerStep#1,4
ProfilerStep#2,1
-- end
