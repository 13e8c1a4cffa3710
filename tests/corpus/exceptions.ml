(* OCaml native: raise and handle exceptions, recursion, closures. *)
exception Found of int

let find p l =
  try List.iter (fun x -> if p x then raise (Found x)) l; None
  with Found x -> Some x

let rec depth n = if n = 0 then raise Not_found else 1 + depth (n - 1)

let () =
  let l = List.init 60 (fun i -> i * 7 mod 101) in
  let hits = ref 0 in
  for k = 0 to 15 do
    (match find (fun x -> x = k) l with Some _ -> incr hits | None -> ());
    (try ignore (depth (k + 5)) with Not_found -> incr hits)
  done;
  Printf.printf "%d\n" !hits
